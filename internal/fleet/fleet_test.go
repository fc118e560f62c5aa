package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

func TestTargets(t *testing.T) {
	servers := map[string]string{"hub": "https://h", "spoke-a": "https://a", "spoke-a-admin": "https://a", "spoke-b": "https://b"}
	got, warns := Targets(servers, []string{"spoke-b", "hub", "nope", "hub", " "}, false)
	var names []string
	for _, tg := range got {
		names = append(names, tg.Context)
	}
	if strings.Join(names, ",") != "spoke-b,hub,nope" {
		t.Errorf("targets = %v, want the order given, duplicates and blanks dropped", names)
	}
	if !got[2].Missing || got[0].Missing || got[0].Server != "https://b" {
		t.Errorf("targets = %+v", got)
	}
	if len(warns) != 0 {
		t.Errorf("warnings = %v, want none", warns)
	}

	got, warns = Targets(servers, nil, true)
	if len(got) != 4 || got[0].Context != "hub" || got[3].Context != "spoke-b" {
		t.Errorf("all contexts = %+v, want 4 sorted", got)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "spoke-a, spoke-a-admin") || !strings.Contains(warns[0], "https://a") {
		t.Errorf("warnings = %v, want one line naming both contexts of https://a", warns)
	}
}

func report(ns, name, manager string) *model.Report {
	r := model.NewReport(model.ResourceID{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}, "")
	r.Drifts = append(r.Drifts, model.FieldDrift{FieldPath: ".data.x", Managers: []model.ManagerRef{{Manager: manager, Operation: "Update"}}})
	return r
}

func fakeScan(drifted map[string][]*model.Report, failing map[string]error) ScanFunc {
	return func(_ context.Context, t Target) (*scan.Result, error) {
		if err := failing[t.Context]; err != nil {
			return nil, err
		}
		if t.Context == "panics" {
			panic("boom")
		}
		items := drifted[t.Context]
		res := &scan.Result{Items: items, Stats: scan.Stats{Kinds: 1, Objects: 10, Owned: 5, Drifted: len(items), Fields: len(items)}, Started: time.Unix(1700000000, 0),
			Notes: []model.Note{{Engine: "argocd", Level: model.NoteInfo, Reason: "scan-wide", Message: "the same in every cluster"}}}
		for _, it := range items {
			res.Summary = append(res.Summary, scan.SummaryRow{Namespace: it.Resource.Namespace, Kind: "ConfigMap", Manager: "kubectl", Objects: 1, Fields: 1})
		}
		return res, nil
	}
}

func TestRunMergesAndSurvivesBrokenClusters(t *testing.T) {
	targets := []Target{{Context: "spoke-b"}, {Context: "hub"}, {Context: "down"}, {Context: "gone", Missing: true}, {Context: "panics"}}
	fn := fakeScan(map[string][]*model.Report{
		"hub":     {report("shop", "a", "kubectl")},
		"spoke-b": {report("shop", "b", "kubectl"), report("web", "c", "kubectl")},
	}, map[string]error{"down": errors.New("cannot reach the Kubernetes API server at https://127.0.0.1:1:\nconnection refused")})
	res := Run(context.Background(), targets, 2, fn)

	if res.Stats.Drifted != 3 || res.Stats.Objects != 20 {
		t.Errorf("stats = %+v, want the two scanned clusters summed", res.Stats)
	}
	if res.Unreachable() != 3 {
		t.Errorf("unreachable = %d, want 3 (down, gone, panics)", res.Unreachable())
	}
	var order []string
	for _, it := range res.Items {
		order = append(order, it.Cluster+"/"+it.Resource.Name)
	}
	if strings.Join(order, ",") != "hub/a,spoke-b/b,spoke-b/c" {
		t.Errorf("items = %v, want sorted by cluster, then as the cluster's scan sorted them", order)
	}
	if len(res.Warnings) != 3 {
		t.Fatalf("warnings = %q, want one per broken cluster", res.Warnings)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "\n") || !strings.HasPrefix(w, "cluster ") {
			t.Errorf("warning %q: want one line naming the cluster", w)
		}
	}
	if len(res.Notes) != 1 || res.Notes[0].Reason != "scan-wide" {
		t.Errorf("notes = %+v, want the clusters' scan note once", res.Notes)
	}
	if !strings.Contains(strings.Join(res.Warnings, "|"), `context "gone" not found`) {
		t.Errorf("warnings = %q, want the missing context named", res.Warnings)
	}

	var b bytes.Buffer
	if err := Print(&b, scan.OutputJSON, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kind     string
		Clusters []ClusterResult
		Items    []map[string]any
		Summary  []map[string]any
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != ResultKind || len(doc.Clusters) != 5 || doc.Clusters[2].Result != Unreachable || doc.Clusters[1].Result != Scanned {
		t.Errorf("json clusters = %+v", doc.Clusters)
	}
	if doc.Items[0]["cluster"] != "hub" || doc.Items[0]["resource"] == nil || doc.Summary[2]["cluster"] != "spoke-b" {
		t.Errorf("json items/summary carry no cluster label or lost the report: %v / %v", doc.Items[0], doc.Summary)
	}

	b.Reset()
	if err := Print(&b, scan.OutputPrometheus, res); err != nil {
		t.Fatal(err)
	}
	prom := b.String()
	for _, want := range []string{
		`kubectl_drift_scan_clusters{result="unreachable"} 3`,
		`kubectl_drift_scan_clusters{result="scanned"} 2`,
		`kubectl_drift_objects{cluster="spoke-b",namespace="web",kind="ConfigMap",engine=""} 1`,
		`kubectl_drift_scan_objects{cluster="hub"} 10`,
	} {
		if !strings.Contains(prom, want) {
			t.Errorf("prometheus output lacks %s:\n%s", want, prom)
		}
	}
	if strings.Contains(prom, `cluster="down"`) {
		t.Errorf("an unreachable cluster has series (its drift is unknown, not zero):\n%s", prom)
	}
	if strings.Count(prom, "# TYPE kubectl_drift_scan_objects ") != 1 {
		t.Errorf("families of the clusters not merged:\n%s", prom)
	}

	b.Reset()
	if err := Print(&b, scan.OutputTable, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2 of 5 clusters scanned") || !strings.HasPrefix(b.String(), "CLUSTER") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestRunBoundsConcurrency(t *testing.T) {
	var cur, peak atomic.Int32
	fn := func(ctx context.Context, _ Target) (*scan.Result, error) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		cur.Add(-1)
		return &scan.Result{}, nil
	}
	var targets []Target
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		targets = append(targets, Target{Context: n})
	}
	res := Run(context.Background(), targets, 3, fn)
	if p := peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrent clusters = %d, want at most 3 (and more than 1)", p)
	}
	if res.Unreachable() != 0 || len(res.Clusters) != 7 {
		t.Errorf("clusters = %+v", res.Clusters)
	}
}

func TestRunSaysWhenCredentialsAreRefused(t *testing.T) {
	fn := fakeScan(nil, map[string]error{"old-token": fmt.Errorf("cannot list deployments.apps: %w", apierrors.NewUnauthorized("Unauthorized"))})
	res := Run(context.Background(), []Target{{Context: "old-token"}}, 1, fn)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "cluster old-token not scanned: the server refused the credentials (401 Unauthorized") {
		t.Errorf("warnings = %q, want one line saying the token was refused", res.Warnings)
	}
}
