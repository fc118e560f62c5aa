// Package scan is the engine behind `kubectl drift scan`: it finds every
// GitOps-owned object whose fields a non-GitOps manager owns, across many
// kinds and namespaces, at the cost of one paginated LIST per kind.
//
// Cost model (the point of the package):
//   - kinds are resolved once against the cached discovery (ResolveKinds);
//   - each kind is read with one LIST (limit/continue pages, resourceVersion=0
//     by default so the watch cache answers), never a GET per object;
//   - built-in kinds are listed in protobuf, as the controllers read them
//     (CRs stay JSON); the LIST body is decoded one object at a time
//     (cluster.Streamer), and a first pass reads only metadata (of a
//     protobuf object, only its metadata field, walked without decoding the
//     rest): only objects that are GitOps-owned and written by another
//     manager are decoded in full and have their managedFields parsed.
//     Memory holds the drifted objects' reports, not the listed objects;
//   - kinds are listed concurrently, bounded by Options.Concurrency; the
//     client-go rate limiter is shared.
//
// The package knows no cobra; the CLI turns flags into Options.
package scan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Source lists the objects of one kind and streams their raw JSON to fn
// (the slice is reused after fn returns). It returns the list's
// resourceVersion. cluster.Streamer backs it in the CLI; tests use fakes.
type Source interface {
	List(ctx context.Context, kind Kind, namespace, labelSelector string, fn func(raw []byte) error) (string, error)
}

// Options describe one scan.
type Options struct {
	// Namespace to scan; "" scans all namespaces.
	Namespace     string
	LabelSelector string
	Kinds         []Kind
	// Engine is "auto", "argocd" or "flux": recorded in the result; the
	// caller passes the matching Adapters in Inspector.
	Engine    string
	Inspector *Inspector
	// Concurrency bounds the kinds listed at once. Zero means 4.
	Concurrency int
	// Now stamps the result; nil means time.Now.
	Now func() time.Time
}

// APIVersion and kind of the document `scan -o json|yaml` prints.
const (
	ResultKind = "ScanResult"
)

// OwnerWarner is an adapter with warnings about the owners it refused
// while the scan asked (an Argo CD Application on a hub that deploys to
// another cluster than the scanned one), read once the scan is done.
type OwnerWarner interface {
	OwnerWarnings() []string
}

// ScanNoter is an adapter with notes about the whole scan, said once
// instead of on every object alike (Argo CD: without Git, verdicts compare
// with its last sync), read once the scan is done.
type ScanNoter interface {
	ScanNotes() []model.Note
}

// Result is what a scan found.
type Result struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Scope      Scope  `json:"scope"`
	Stats      Stats  `json:"stats"`
	// Summary groups drifted fields by namespace, kind, manager and engine:
	// the patterns that point at process gaps.
	Summary []SummaryRow `json:"summary"`
	// Items are the drifted objects, sorted by namespace, group, kind, name.
	Items []*model.Report `json:"items"`
	// Warnings are kinds that could not be listed (Forbidden...) and
	// objects that could not be judged; the rest was scanned.
	Warnings []string `json:"warnings,omitempty"`
	// Notes are the engines' notes about the whole scan (ScanNoter), each
	// said once rather than on every report.
	Notes []model.Note `json:"notes,omitempty"`

	// Time the scan ran and how long it took: for metrics, not printed in
	// JSON (which stays the same from run to run on the same cluster).
	Started  time.Time     `json:"-"`
	Duration time.Duration `json:"-"`
	// KindResults tells, per kind, whether it was listed.
	KindResults []KindResult `json:"-"`
}

// Scope says what was scanned.
type Scope struct {
	Namespace     string   `json:"namespace,omitempty"`
	AllNamespaces bool     `json:"allNamespaces,omitempty"`
	LabelSelector string   `json:"labelSelector,omitempty"`
	Engine        string   `json:"engine"`
	Kinds         []string `json:"kinds"`
}

// Stats count what the scan saw.
type Stats struct {
	// Kinds listed successfully, and kinds skipped (Forbidden, gone).
	Kinds        int `json:"kinds"`
	KindsSkipped int `json:"kindsSkipped,omitempty"`
	// Objects listed; Owned of them GitOps-owned; Drifted of those with
	// drift that counts (see model.Report.HasDrift); Fields drifted.
	Objects int `json:"objects"`
	Owned   int `json:"owned"`
	Drifted int `json:"drifted"`
	Fields  int `json:"fields"`
}

// SummaryRow is one group of the summary.
type SummaryRow struct {
	Namespace string           `json:"namespace"`
	Kind      string           `json:"kind"`
	Manager   string           `json:"manager"`
	Class     model.CauseClass `json:"class"`
	Engine    model.Engine     `json:"engine"`
	Objects   int              `json:"objects"`
	Fields    int              `json:"fields"`
}

// KindResult is how listing one kind went.
type KindResult struct {
	Kind Kind
	// Skipped is set (with Warning) when the kind could not be listed.
	Skipped bool
	Warning string
	Objects int
}

// ErrNoKinds is returned when there is nothing to scan.
var ErrNoKinds = errors.New("no kinds to scan")

// JSONLister is a Source that can also list a kind as JSON only: Run's
// fallback when a protobuf object holds fields this client's Go types do
// not know, and what a watcher lists with.
type JSONLister interface {
	ListJSON(ctx context.Context, kind Kind, namespace, labelSelector string, fn func(raw []byte) error) (string, error)
}

// Run scans. The error is non-nil when a kind failed for another reason
// than Forbidden/NotFound, or when every kind was skipped; the result then
// still holds what was scanned.
func Run(ctx context.Context, src Source, opts Options) (*Result, error) {
	if len(opts.Kinds) == 0 {
		return nil, ErrNoKinds
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	conc := opts.Concurrency
	if conc <= 0 {
		conc = 4
	}
	in := opts.Inspector
	if in == nil {
		in = &Inspector{}
	}
	res := newResult(opts, now())
	var (
		judgeMu sync.Mutex // adapters need not be safe for concurrent use
		kinds   = make([]kindScan, len(opts.Kinds))
	)
	Bounded(ctx, len(opts.Kinds), conc, func(i int) {
		kinds[i] = in.scanKind(ctx, src, &judgeMu, opts, opts.Kinds[i])
	}, nil)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	errs := res.collect(kinds)
	for _, a := range in.Adapters {
		if w, ok := a.(OwnerWarner); ok {
			res.Warnings = append(res.Warnings, w.OwnerWarnings()...)
		}
		if n, ok := a.(ScanNoter); ok {
			res.Notes = append(res.Notes, n.ScanNotes()...)
		}
	}
	finish(res, in)
	res.Duration = now().Sub(res.Started)

	if len(errs) > 0 {
		return res, errors.Join(errs...)
	}
	if res.Stats.Kinds == 0 {
		return res, fmt.Errorf("no kind could be listed: %s", res.Warnings[0])
	}
	return res, nil
}

// newResult is the empty result of a scan of opts started at started.
func newResult(opts Options, started time.Time) *Result {
	res := &Result{
		APIVersion: model.APIVersion,
		Kind:       ResultKind,
		Scope: Scope{
			Namespace:     opts.Namespace,
			AllNamespaces: opts.Namespace == "",
			LabelSelector: opts.LabelSelector,
			Engine:        opts.Engine,
		},
		Started: started,
		Items:   []*model.Report{},
		Summary: []SummaryRow{},
	}
	for _, k := range opts.Kinds {
		res.Scope.Kinds = append(res.Scope.Kinds, k.String())
	}
	return res
}

// kindScan is what listing one kind found, kept apart per kind so that a
// kind listed again (JSON after protobuf) replaces its first attempt.
type kindScan struct {
	result   KindResult
	owned    int
	items    []*model.Report
	warnings []string
	err      error
}

// scanKind lists one kind and inspects each object; a protobuf object with
// fields this client does not know sends the whole kind to JSON.
func (in *Inspector) scanKind(ctx context.Context, src Source, judgeMu *sync.Mutex, opts Options, k Kind) kindScan {
	ks := in.listKind(ctx, src.List, judgeMu, opts, k)
	if j, ok := src.(JSONLister); ok && errors.Is(ks.err, errProtoSkew) {
		ks = in.listKind(ctx, j.ListJSON, judgeMu, opts, k)
	}
	if err := ks.err; err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			ks.result.Skipped = true
			ks.result.Warning = fmt.Sprintf("%s not scanned: %v", k, err)
			ks.err = nil
		} else {
			ks.err = fmt.Errorf("%s: %w", k, err)
		}
	}
	return ks
}

type listFunc func(ctx context.Context, kind Kind, namespace, labelSelector string, fn func(raw []byte) error) (string, error)

func (in *Inspector) listKind(ctx context.Context, list listFunc, judgeMu *sync.Mutex, opts Options, k Kind) kindScan {
	ks := kindScan{result: KindResult{Kind: k}}
	_, ks.err = list(ctx, k, opts.Namespace, opts.LabelSelector, func(raw []byte) error {
		ks.result.Objects++
		rep, isOwned, warn, err := in.inspect(ctx, judgeMu, k, raw)
		if err != nil {
			return err
		}
		if isOwned {
			ks.owned++
		}
		if rep != nil {
			ks.items = append(ks.items, rep)
		}
		ks.warnings = append(ks.warnings, warn...)
		return nil
	})
	return ks
}

// collect adds the kinds' findings to res and returns their errors.
func (res *Result) collect(kinds []kindScan) []error {
	var errs []error
	res.KindResults = make([]KindResult, len(kinds))
	for i, ks := range kinds {
		res.KindResults[i] = ks.result
		res.Stats.Objects += ks.result.Objects
		res.Stats.Owned += ks.owned
		res.Items = append(res.Items, ks.items...)
		res.Warnings = append(res.Warnings, ks.warnings...)
		if ks.err != nil {
			errs = append(errs, ks.err)
		}
	}
	for _, r := range res.KindResults {
		if r.Skipped {
			res.Stats.KindsSkipped++
			res.Warnings = append(res.Warnings, r.Warning)
		} else {
			res.Stats.Kinds++
		}
	}
	return errs
}

// inspect runs the first pass and, for candidates, the full one, then lets
// the owning engines judge. It returns the drift report (nil when clean),
// whether the object is GitOps-owned (for stats), and warnings. Only the
// report is kept: the decoded object is garbage once inspect returns.
func (in *Inspector) inspect(ctx context.Context, judgeMu *sync.Mutex, k Kind, raw []byte) (rep *model.Report, owned bool, warns []string, err error) {
	// A bug tripped by one odd object must cost that object, not the scan:
	// it runs in a worker goroutine, where a panic would kill the process.
	defer func() {
		if r := recover(); r != nil {
			rep, warns, err = nil, []string{fmt.Sprintf("%s: internal error inspecting an object: %v", k, r)}, nil
		}
	}()
	cand, owned, err := in.Precheck(k, raw)
	if err != nil || cand == nil {
		return nil, owned, nil, err
	}
	obj, err := Decode(k, raw)
	if err != nil {
		return nil, owned, nil, err
	}
	rep, warns, err = in.Explain(ctx, judgeMu, cand, obj)
	if err != nil {
		// One object with broken managedFields must not stop the scan.
		return nil, owned, []string{err.Error()}, nil
	}
	return rep, owned, warns, nil
}

// finish sorts items and builds stats and summary.
func finish(res *Result, in *Inspector) {
	sort.Slice(res.Items, func(i, j int) bool { return res.Items[i].Resource.Less(res.Items[j].Resource) })
	sort.Strings(res.Warnings)
	// One owner that failed to render warns once, not once per object.
	res.Warnings = slices.Compact(res.Warnings)

	type key struct {
		ns, kind, manager string
		engine            model.Engine
	}
	rows := map[key]*SummaryRow{}
	for _, r := range res.Items {
		if r.HasDrift() {
			res.Stats.Drifted++
		}
		seen := map[key]bool{}
		for _, d := range r.Drifts {
			res.Stats.Fields++
			m := in.culprit(d)
			for _, eng := range engines(r) {
				k := key{r.Resource.Namespace, r.Resource.GroupKind(), m.Manager, eng}
				row := rows[k]
				if row == nil {
					row = &SummaryRow{Namespace: k.ns, Kind: k.kind, Manager: k.manager, Class: m.Class, Engine: eng}
					rows[k] = row
				}
				row.Fields++
				if !seen[k] {
					seen[k] = true
					row.Objects++
				}
			}
		}
	}
	for _, row := range rows {
		res.Summary = append(res.Summary, *row)
	}
	// Rows are keyed by all four: the order is total.
	slices.SortFunc(res.Summary, func(a, b SummaryRow) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Manager, b.Manager), cmp.Compare(a.Engine, b.Engine))
	})
}

// engines are the engines owning a report's object (one, nearly always).
func engines(r *model.Report) []model.Engine {
	var out []model.Engine
	for _, o := range r.Owners {
		out = append(out, o.Engine)
	}
	if len(out) == 0 {
		out = []model.Engine{""}
	}
	return out
}

// verdictOf is the verdict the engine gave a field, "unknown" when it gave
// none (its rules could not be read).
func verdictOf(d model.FieldDrift, eng model.Engine) model.VerdictKind {
	for _, v := range d.Verdicts {
		if v.Engine == eng {
			return v.Kind
		}
	}
	return "unknown"
}
