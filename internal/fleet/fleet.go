// Package fleet runs one scan across several clusters (kubeconfig
// contexts): `scan --contexts a,b,c` and `--all-contexts`. Each cluster is
// scanned exactly as a single-cluster scan does it (one LIST per kind,
// through its own client and rate limiter); clusters are scanned
// concurrently with a bound. A cluster that cannot be scanned (unreachable,
// token refused, context missing) is one warning and one "unreachable"
// cluster in the result, never a failed fleet scan.
//
// The package knows no cobra and no client: the CLI gives it one function
// that scans one cluster.
package fleet

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// ResultKind is the kind of the document `scan --contexts -o json|yaml`
// prints.
const ResultKind = "FleetScanResult"

// Cluster results (the result label of kubectl_drift_scan_clusters).
const (
	Scanned     = "scanned"
	Unreachable = "unreachable"
)

// DefaultMaxConcurrent is the default bound on clusters scanned at once:
// each scan already lists several kinds at once, so a few clusters keep
// the machine and the network busy without a burst of connections.
const DefaultMaxConcurrent = 4

// Target is one cluster of the fleet.
type Target struct {
	// Context is the kubeconfig context, the cluster label of every row.
	Context string
	// Server is the API server URL the context points at ("" when the
	// context does not exist).
	Server string
	// Missing is set when the kubeconfig has no such context: it is
	// reported as unreachable without a connection attempt.
	Missing bool
}

// Targets resolves --contexts (names, in the order given, duplicates
// dropped) or --all-contexts (every context, sorted) against the
// kubeconfig's contexts (servers: context name → server URL). Two contexts for the same server scan the same cluster
// twice: both are kept (they may differ in user or namespace) and one
// warning line says so.
func Targets(servers map[string]string, names []string, all bool) ([]Target, []string) {
	if all {
		names = nil
		for n := range servers {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	var out []Target
	var warnings []string
	seen := map[string]bool{}
	byServer := map[string][]string{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		t := Target{Context: n}
		server, ok := servers[n]
		switch {
		case !ok:
			t.Missing = true
		case server != "":
			t.Server = server
			byServer[server] = append(byServer[server], n)
		}
		out = append(out, t)
	}
	shared := make([]string, 0, len(byServer))
	for s := range byServer {
		shared = append(shared, s)
	}
	sort.Strings(shared)
	for _, s := range shared {
		if ctxs := byServer[s]; len(ctxs) > 1 {
			warnings = append(warnings, fmt.Sprintf("contexts %s point at the same server %s: its drift is listed once per context", strings.Join(ctxs, ", "), s))
		}
	}
	return out, warnings
}

// ScanFunc scans one cluster. Warnings of a scanned cluster go in the
// result's Warnings; an error makes the cluster unreachable.
type ScanFunc func(ctx context.Context, t Target) (*scan.Result, error)

// ClusterResult is how scanning one cluster went.
type ClusterResult struct {
	Name   string `json:"name"`
	Server string `json:"server,omitempty"`
	// Result is "scanned" or "unreachable".
	Result string `json:"result"`
	// Error says why an unreachable cluster was not scanned (one line).
	Error string     `json:"error,omitempty"`
	Stats scan.Stats `json:"stats"`
}

// SummaryRow is a scan summary row with its cluster.
type SummaryRow struct {
	Cluster string `json:"cluster"`
	scan.SummaryRow
}

// Item is a drifted object with its cluster.
type Item struct {
	Cluster string `json:"cluster"`
	*model.Report
}

// Result is what a fleet scan found.
type Result struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Clusters   []ClusterResult `json:"clusters"`
	// Stats are the totals over the scanned clusters.
	Stats    scan.Stats   `json:"stats"`
	Summary  []SummaryRow `json:"summary"`
	Items    []Item       `json:"items"`
	Warnings []string     `json:"warnings,omitempty"`
	// Notes are the clusters' notes about their scans (scan.Result.Notes),
	// each said once however many clusters said it.
	Notes []model.Note `json:"notes,omitempty"`

	// scans are the scanned clusters' results, by cluster name (metrics).
	scans map[string]*scan.Result
	// Duration is the fleet scan's wall time (metrics only).
	Duration time.Duration `json:"-"`
}

// Run scans every target, at most maxConcurrent at once (<= 0: the
// default), and merges the results: clusters in the order given, rows
// sorted by cluster, then as a single-cluster scan sorts them.
func Run(ctx context.Context, targets []Target, maxConcurrent int, fn ScanFunc) *Result {
	if maxConcurrent <= 0 {
		maxConcurrent = DefaultMaxConcurrent
	}
	start := time.Now()
	results := make([]*scan.Result, len(targets))
	errs := make([]error, len(targets))
	for i, t := range targets {
		if t.Missing {
			errs[i] = fmt.Errorf("context %q not found in the kubeconfig", t.Context)
		}
	}
	scan.Bounded(ctx, len(targets), maxConcurrent, func(i int) {
		if !targets[i].Missing {
			results[i], errs[i] = scanOne(ctx, fn, targets[i])
		}
	}, func(i int) {
		if !targets[i].Missing {
			errs[i] = ctx.Err()
		}
	})

	res := &Result{APIVersion: model.APIVersion, Kind: ResultKind, Summary: []SummaryRow{}, Items: []Item{}, scans: map[string]*scan.Result{}}
	for i, t := range targets {
		cr := ClusterResult{Name: t.Context, Server: t.Server, Result: Scanned}
		r := results[i]
		if errs[i] != nil || r == nil {
			cr.Result = Unreachable
			msg := "no result"
			if errs[i] != nil {
				msg = oneLine(errs[i].Error())
				if apierrors.IsUnauthorized(errs[i]) {
					// An expired or revoked token: say so before the
					// request that happened to meet it first.
					msg = "the server refused the credentials (401 Unauthorized: expired or revoked token?): " + msg
				}
			}
			cr.Error = msg
			res.Warnings = append(res.Warnings, fmt.Sprintf("cluster %s not scanned: %s", t.Context, msg))
			res.Clusters = append(res.Clusters, cr)
			continue
		}
		cr.Stats = r.Stats
		res.Clusters = append(res.Clusters, cr)
		res.scans[t.Context] = r
		add(&res.Stats, r.Stats)
		for _, row := range r.Summary {
			res.Summary = append(res.Summary, SummaryRow{Cluster: t.Context, SummaryRow: row})
		}
		for _, it := range r.Items {
			res.Items = append(res.Items, Item{Cluster: t.Context, Report: it})
		}
		for _, w := range r.Warnings {
			res.Warnings = append(res.Warnings, fmt.Sprintf("cluster %s: %s", t.Context, w))
		}
		for _, n := range r.Notes {
			if !slices.Contains(res.Notes, n) {
				res.Notes = append(res.Notes, n)
			}
		}
	}
	// Each cluster's rows are already sorted; a stable sort by cluster
	// keeps that order within a cluster.
	sort.SliceStable(res.Summary, func(i, j int) bool { return res.Summary[i].Cluster < res.Summary[j].Cluster })
	sort.SliceStable(res.Items, func(i, j int) bool { return res.Items[i].Cluster < res.Items[j].Cluster })
	res.Duration = time.Since(start)
	return res
}

// scanOne runs fn, turning a panic into that cluster's error: a bug
// tripped by one cluster must cost that cluster, not the fleet.
func scanOne(ctx context.Context, fn ScanFunc, t Target) (r *scan.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("internal error: %v", p)
		}
	}()
	return fn(ctx, t)
}

// Drifted reports whether any scanned cluster has drift (exit code 1).
func (r *Result) Drifted() bool { return r.Stats.Drifted > 0 }

// Unreachable counts the clusters that were not scanned.
func (r *Result) Unreachable() int {
	n := 0
	for _, c := range r.Clusters {
		if c.Result == Unreachable {
			n++
		}
	}
	return n
}

func add(a *scan.Stats, b scan.Stats) {
	a.Kinds += b.Kinds
	a.KindsSkipped += b.KindsSkipped
	a.Objects += b.Objects
	a.Owned += b.Owned
	a.Drifted += b.Drifted
	a.Fields += b.Fields
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
