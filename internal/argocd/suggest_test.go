package argocd_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/audit"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// testdata/suggest: a Deployment tracked by the Application argocd/shop
// (auto-sync with selfHeal), scaled by an HPA (replicas) and whose
// container cpu limit an operator (manager "manager") rewrote.
var suggested = [2]string{"/spec/replicas", "/spec/template/spec/containers/0/resources/limits/cpu"}

// argoSuggest returns Argo CD's suggest semantics as the registry fills
// them, and the drift of the fixture judged by adapters (none: not judged).
func argoSuggest(t *testing.T, adapters ...model.Adapter) (suggestapi.Semantics, *model.Report) {
	t.Helper()
	e, ok := argocd.Descriptor().SuggestSemantics()
	dir := filepath.Join("testdata", "suggest")
	r, err := drift.Explain(context.Background(), drift.Request{Live: testutil.ReadObject(t, dir, "argo-live.yaml"),
		Desired: testutil.ReadObject(t, dir, "argo-desired.yaml"), Source: model.SourceFile, Adapters: adapters, Offline: true})
	if !ok || err != nil {
		t.Fatalf("suggest semantics %v, explain: %v", ok, err)
	}
	return e, r
}

func rule(t *testing.T, s suggest.Suggestion) argocd.SuggestedRule {
	t.Helper()
	r, ok := s.Rules[argocd.Descriptor().Name].(argocd.SuggestedRule)
	if !ok {
		t.Fatalf("%s: no Argo CD rule in %+v", s.Pointer, s.Rules)
	}
	return r
}

func TestSuggestArgoRuleShapes(t *testing.T) {
	e, r := argoSuggest(t)
	ss := suggest.Build(r, []suggestapi.Semantics{e})
	if len(ss) != 2 || [2]string{ss[0].Pointer, ss[1].Pointer} != suggested {
		t.Fatalf("want replicas (the HPA's) and cpu (the operator's), got %+v", ss)
	}
	if r := rule(t, ss[0]); len(r.ManagedFieldsManagers) != 0 || len(r.JSONPointers) != 1 || r.JSONPointers[0] != suggested[0] || !r.RespectIgnoreDifferences {
		t.Errorf("replicas in Git: a sync writes it, so a JSON pointer with RespectIgnoreDifferences, got %+v", r)
	}
	want := `.spec.template.spec.containers[] | select(.name == "app") | .resources.limits.cpu`
	if r := rule(t, ss[1]); len(r.JQPathExpressions) != 1 || r.JQPathExpressions[0] != want || len(r.ManagedFieldsManagers) != 0 {
		t.Errorf("cpu: the generic manager \"manager\" is not stable, a keyed item gives jq %q, got %+v", want, r)
	}
	// A field Git lacks, written by a stable manager: only the diff
	// matters, and the manager rule covers what it writes next.
	added, _ := e.Suggest(suggestapi.Field{Resource: r.Resource, Manager: "vpa-updater", StableManager: true,
		Drift: model.FieldDrift{Path: "/metadata/annotations/autoscaling", FieldPath: ".metadata.annotations.autoscaling", Change: model.Added}})
	if a := added.(argocd.SuggestedRule); strings.Join(a.ManagedFieldsManagers, ",") != "vpa-updater" || a.RespectIgnoreDifferences || len(a.JSONPointers) != 0 {
		t.Errorf("a field Git lacks, stable manager: want managedFieldsManagers only, got %+v", a)
	}
}

func TestJQPath(t *testing.T) {
	for in, want := range map[string]string{
		".spec.replicas": ".spec.replicas",
		".spec.template.spec.containers[name=app].ports[containerPort=80,protocol=TCP].hostPort": `.spec.template.spec.containers[] | select(.name == "app") | .ports[] | select(.containerPort == 80 and .protocol == "TCP") | .hostPort`,
		`.metadata.annotations["example.com/x"]`:                                                 `.metadata.annotations["example.com/x"]`,
	} {
		if got := argocd.JQPath(in); got != want {
			t.Errorf("JQPath(%s) = %s, want %s", in, got, want)
		}
	}
}

// Auto-sync with selfHeal reverts both; with the suggested
// ignoreDifferences entry (a JSON pointer for replicas, jq for the
// operator's container item) our judge says ignored, and audit finds no
// error in the Application as it would be committed.
func TestSuggestArgoRulesAreChecked(t *testing.T) {
	docs, err := source.LoadFiles([]string{filepath.Join("testdata", "suggest", "application.yaml")}, nil, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := argocd.New(argocd.Options{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	e, judged := argoSuggest(t, before)
	reverted := map[string]bool{}
	for _, d := range judged.Drifts {
		for _, v := range d.Verdicts {
			reverted[d.Path] = reverted[d.Path] || v.Kind == model.Reverted
		}
	}
	if !reverted[suggested[0]] || !reverted[suggested[1]] {
		t.Fatalf("before the rule both are reverted, got %v", reverted)
	}
	ss := suggest.Build(judged, []suggestapi.Semantics{e})
	dir := filepath.Join("testdata", "suggest")
	suggest.CheckAll(context.Background(), ss, []suggest.EngineObject{{Object: docs[0].Object, Engine: e}}, judged,
		testutil.ReadObject(t, dir, "argo-live.yaml"), testutil.ReadObject(t, dir, "argo-desired.yaml"),
		suggest.CheckOptions{Extractors: []audit.Extractor{argocd.RulesFromDocuments}})
	if len(ss) != 2 {
		t.Fatalf("suggestions: %+v", ss)
	}
	for _, s := range ss {
		var c suggest.Checked
		if len(s.Checks) == 1 {
			c = s.Checks[0]
		}
		if !c.OK || c.Verdict != model.Ignored || c.Engine != e.Engine || len(c.Audit) != 0 {
			t.Errorf("%s: want ignored by the Application with the rule and no audit finding, got checks %+v, not checked %v", s.Pointer, s.Checks, s.NotChecked)
		}
	}
}

// The snippets as printed by `suggest`, and the Application with the rule
// as the check judges it, reviewed in testdata/suggest.
func TestSuggestArgoSnippetsGolden(t *testing.T) {
	e, r := argoSuggest(t)
	app := testutil.ReadObject(t, "testdata", "suggest", "application.yaml")
	var b strings.Builder
	for _, s := range suggest.Build(r, []suggestapi.Semantics{e}) {
		b.WriteString("## " + s.FieldPath + " Application\n" + s.Snippet(e, "Application"))
		withRule, err := s.WithRule(e, app)
		if err != nil {
			t.Fatal(err)
		}
		y, err := s.YAML(e, withRule)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("## " + s.FieldPath + " Application with the rule\n" + string(y))
	}
	testutil.Golden(t, filepath.Join("testdata", "suggest", "snippets.golden"), []byte(b.String()))
}
