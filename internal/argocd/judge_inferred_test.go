package argocd

import (
	"cmp"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// inferredReport runs the pipeline exactly as scan and explain without -f
// do (no desired state) on a live object captured from a real Argo CD
// (testdata/inferred/README.md), judged by Argo CD alone.
func inferredReport(t *testing.T, dir string, mutateApp func(*unstructured.Unstructured)) *model.Report {
	t.Helper()
	app := readTestObject(t, filepath.Join(dir, "application.json"))
	if app == nil {
		app = readTestObject(t, filepath.Join(dir, "application.yaml"))
	}
	if mutateApp != nil {
		mutateApp(app)
	}
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Inputs: []Input{{Object: app}}, GVKParser: parser})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := drift.Explain(context.Background(), drift.Request{
		Live: readTestObject(t, filepath.Join(dir, "live.json")), Engine: string(Engine), Adapters: []model.Adapter{a}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func selfHeal(app *unstructured.Unstructured) {
	_ = unstructured.SetNestedField(app.Object, true, "spec", "syncPolicy", "automated", "selfHeal")
}

type wantVerdict struct {
	kind model.VerdictKind
	// reason must contain each of these; absent must not be in it.
	reason []string
	absent string
}

// TestJudgeInferredLastApplied: Argo CD's verdicts without a desired state
// on objects a real Argo CD v3.2.11 synced (client-side apply, its
// default) and kubectl then changed. Each expectation is what the running
// application-controller did in e2e/argoconformance_test.go (the scenario
// of the same name): self-heal kept the fields called left alone and put
// back the others.
func TestJudgeInferredLastApplied(t *testing.T) {
	const lastSync = "OutOfSync against Argo CD's last sync"
	const extraneous = "not in last-applied-configuration, Argo CD's 3-way diff does not report it"
	cases := []struct {
		name     string
		mutate   func(*unstructured.Unstructured)
		outOf    bool // the object's sync status
		verdicts map[string]wantVerdict
		// notArgos: kubectl edit rewrote last-applied-configuration (it
		// keeps an existing one up to date), so it is no longer Argo
		// CD's last sync and the verdict falls back to ownership.
		notArgos bool
	}{
		{name: "ssa-edit-sidecar", mutate: selfHeal, outOf: true, notArgos: true, verdicts: map[string]wantVerdict{
			"/spec/template/spec/containers/1/image": {kind: model.Reverted, reason: []string{"selfHeal reverts it"}, absent: lastSync}}},
		{name: "csa-label-added", verdicts: map[string]wantVerdict{
			"/metadata/labels/hotfix": {kind: model.LeftAlone, reason: []string{extraneous}}}},
		{name: "csa-patch-minreadyseconds", verdicts: map[string]wantVerdict{
			"/spec/minReadySeconds": {kind: model.LeftAlone, reason: []string{extraneous}}}},
		{name: "csa-label-and-scale", outOf: true, verdicts: map[string]wantVerdict{
			"/metadata/labels/hotfix": {kind: model.LeftAlone, reason: []string{extraneous}},
			"/spec/replicas":          {kind: model.Reported, reason: []string{lastSync, "manual sync policy"}}}},
		{name: "csa-label-and-scale", mutate: selfHeal, outOf: true, verdicts: map[string]wantVerdict{
			"/metadata/labels/hotfix": {kind: model.LeftAlone, reason: []string{extraneous}},
			"/spec/replicas":          {kind: model.Reverted, reason: []string{lastSync, "selfHeal reverts it"}}}},
		// The removed env var has no owner, so managedFields list nothing:
		// Argo CD's diff against last-applied-configuration names it.
		{name: "csa-env-removed-live", mutate: selfHeal, outOf: true, verdicts: map[string]wantVerdict{
			"/spec/template/spec/containers/0/env": {kind: model.Reverted, reason: []string{lastSync}}}},
		{name: "app-ignore-pointer", verdicts: map[string]wantVerdict{
			"/spec/replicas": {kind: model.Ignored, reason: []string{"ignored by Application"}, absent: SyncReappliesPhrase}}},
		{name: "app-ignore-pointer-other-drift", mutate: selfHeal, outOf: true, verdicts: map[string]wantVerdict{
			"/spec/replicas":                         {kind: model.Ignored, reason: []string{"ignored by Application", SyncReappliesPhrase}},
			"/spec/template/spec/containers/0/image": {kind: model.Reverted, reason: []string{lastSync}}}},
		{name: "app-ignore-respect", mutate: selfHeal, outOf: true, verdicts: map[string]wantVerdict{
			"/spec/replicas":                         {kind: model.Ignored, reason: []string{"ignored by Application", "RespectIgnoreDifferences"}, absent: SyncReappliesPhrase},
			"/spec/template/spec/containers/0/image": {kind: model.Reverted, reason: []string{lastSync}}}},
		// ServerSideApply=true, but the first sync was a client-side one
		// that wrote last-applied-configuration (as Argo CD v3.2.11 did):
		// the structured-merge diff against it decides.
		{name: "ssa-label-added", verdicts: map[string]wantVerdict{
			"/metadata/labels/hotfix": {kind: model.LeftAlone, reason: []string{"not in last-applied-configuration", "server-side apply leaves other managers' fields alone"}}}},
		{name: "ssa-patch-minreadyseconds", verdicts: map[string]wantVerdict{
			"/spec/minReadySeconds": {kind: model.LeftAlone, reason: []string{"not in last-applied-configuration"}}}},
	}
	for _, c := range cases {
		name := c.name
		if c.mutate != nil {
			name += "/selfheal"
		}
		t.Run(name, func(t *testing.T) {
			rep := inferredReport(t, filepath.Join("testdata/inferred", c.name), c.mutate)
			if rep.DesiredSource != model.SourceManagedFields {
				t.Fatalf("source %q: the case must run without a desired state", rep.DesiredSource)
			}
			got := map[string]bool{}
			for _, d := range rep.Drifts {
				got[d.Path] = true
				w, ok := c.verdicts[d.Path]
				if !ok {
					t.Errorf("unexpected drift %s: %+v", d.Path, verdictOf(d, Engine))
					continue
				}
				v := argoVerdict(t, rep, d.Path)
				if v.Kind != w.kind {
					t.Errorf("%s: %s (%s), want %s", d.Path, v.Kind, v.Reason, w.kind)
				}
				for _, r := range w.reason {
					if !strings.Contains(v.Reason, r) {
						t.Errorf("%s: reason %q lacks %q", d.Path, v.Reason, r)
					}
				}
				if w.absent != "" && strings.Contains(v.Reason, w.absent) {
					t.Errorf("%s: reason %q says %q", d.Path, v.Reason, w.absent)
				}
			}
			for p := range c.verdicts {
				if !got[p] {
					t.Errorf("no drift at %s (drifts: %+v)", p, rep.Drifts)
				}
			}
			st := statusOf(t, rep)
			if st.Drift != c.outOf {
				t.Errorf("object OutOfSync = %v, want %v", st.Drift, c.outOf)
			}
			if hasNote(rep, "argocd-last-applied") == c.notArgos {
				t.Errorf("last-applied note present = %v, want %v: %+v", !c.notArgos, c.notArgos, rep.Notes)
			}
		})
	}
}

// TestJudgeInferredServerSideApply: an object argocd-controller created
// with a server-side apply carries no last-applied-configuration (live
// objects of the parity corpus, made by kubectl apply --server-side
// --field-manager=argocd-controller). A label another manager added and a
// field it changed read the same in managedFields as a field of Git that
// another manager changed (taking it from argocd-controller): Argo CD's
// structured-merge diff shows the field only in the second case, which
// Git decides (class I5, seeds 52019, 52060): unknown, with the reason.
func TestJudgeInferredServerSideApply(t *testing.T) {
	rep := inferredReport(t, "testdata/parity/cases/ssa-extra-label", nil)
	if v := argoVerdict(t, rep, "/metadata/labels/extra"); v.Kind != model.Unknown || !strings.Contains(v.Reason, "a server-side sync writes none") {
		t.Errorf("extra label: %+v", v)
	}
	if hasNote(rep, "argocd-last-applied") {
		t.Errorf("a last-applied note without last-applied-configuration: %+v", rep.Notes)
	}
	rep = inferredReport(t, "testdata/parity/cases/ssa-scale", nil)
	if v := argoVerdict(t, rep, "/spec/replicas"); v.Kind != model.Unknown {
		t.Errorf("scaled replicas: %+v", v)
	}
}

// TestArgoLastAppliedOwner: only an annotation an Argo CD manager wrote is
// Argo CD's last sync; kubectl apply by hand writes the same annotation.
func TestArgoLastAppliedOwner(t *testing.T) {
	live := readTestObject(t, "testdata/inferred/csa-label-added/live.json")
	if argoLastApplied(live, nil) == nil {
		t.Fatal("argocd-controller's last-applied-configuration not read")
	}
	mf := live.GetManagedFields()
	for i := range mf {
		if IsManager(mf[i].Manager) {
			mf[i].Manager = "kubectl-client-side-apply"
		}
	}
	live.SetManagedFields(mf)
	if la := argoLastApplied(live, nil); la != nil {
		t.Errorf("kubectl-client-side-apply's annotation taken for Argo CD's last sync")
	}
}

func statusOf(t *testing.T, rep *model.Report) model.ObjectStatus {
	t.Helper()
	st, ok := rep.StatusOf(Engine)
	if !ok {
		t.Fatalf("no Argo CD status: %+v", rep)
	}
	return st
}

func hasNote(rep *model.Report, reason string) bool {
	for _, n := range rep.Notes {
		if n.Reason == reason {
			return true
		}
	}
	return false
}

// TestJudgeInferredReadsApplicationStatus: without Git, a commit Argo CD
// has not synced leaves the live object equal to its last sync (the
// csa-*-from-git scenarios of e2e/argoconformance_test.go); the
// controller's own comparison in the Application's status.resources still
// says OutOfSync, and the object verdict follows it. A Synced entry, or
// none, changes nothing.
func TestJudgeInferredReadsApplicationStatus(t *testing.T) {
	dir := filepath.Join("testdata/inferred", "csa-label-added")
	live := readTestObject(t, filepath.Join(dir, "live.json"))
	for _, status := range []string{"OutOfSync", "Synced", ""} {
		t.Run(cmp.Or(status, "none"), func(t *testing.T) {
			rep := inferredReport(t, dir, func(app *unstructured.Unstructured) {
				if status == "" {
					return
				}
				gvk := live.GroupVersionKind()
				_ = unstructured.SetNestedSlice(app.Object, []any{map[string]any{
					"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind,
					"namespace": live.GetNamespace(), "name": live.GetName(), "status": status}}, "status", "resources")
			})
			st := statusOf(t, rep)
			want := status == "OutOfSync"
			if st.Drift != want {
				t.Errorf("object OutOfSync = %v (from %s), want %v", st.Drift, st.From, want)
			}
			if hasNote(rep, "outofsync-in-status") != want {
				t.Errorf("outofsync-in-status note present = %v, want %v: %+v", !want, want, rep.Notes)
			}
			// The fields stay judged against the last sync: the label
			// kubectl added is still left alone.
			if v := argoVerdict(t, rep, "/metadata/labels/hotfix"); v.Kind != model.LeftAlone {
				t.Errorf("/metadata/labels/hotfix: %s (%s), want %s", v.Kind, v.Reason, model.LeftAlone)
			}
		})
	}
}
