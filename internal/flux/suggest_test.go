package flux_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/audit"
	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// testdata/suggest: a Deployment applied by kustomize-controller, scaled
// by an HPA and whose container cpu limit an operator rewrote, and the
// Kustomization that applies it.
const (
	replicas = "/spec/replicas"
	cpu      = "/spec/template/spec/containers/0/resources/limits/cpu"
)

func suggestFixture(t *testing.T) (live, desired, ks *unstructured.Unstructured) {
	t.Helper()
	dir := filepath.Join("testdata", "suggest")
	return testutil.ReadObject(t, dir, "flux-live.yaml"), testutil.ReadObject(t, dir, "desired.yaml"), testutil.ReadObject(t, dir, "kustomization.yaml")
}

// explained is explain's report of live against desired, judged by the
// adapters given (none: not judged).
func explained(t *testing.T, live, desired *unstructured.Unstructured, adapters ...model.Adapter) *model.Report {
	t.Helper()
	r, err := drift.Explain(context.Background(), drift.Request{Live: live, Desired: desired, Source: model.SourceFile, Adapters: adapters, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fluxSuggest(t *testing.T) suggestapi.Semantics {
	t.Helper()
	e, ok := flux.Descriptor().SuggestSemantics()
	if !ok {
		t.Fatal("Flux describes no suggest semantics")
	}
	return e
}

func TestSuggestFluxRules(t *testing.T) {
	live, desired, _ := suggestFixture(t)
	ss := suggest.Build(explained(t, live, desired), []suggestapi.Semantics{fluxSuggest(t)})
	if len(ss) != 2 || ss[0].Pointer != replicas || ss[1].Pointer != cpu {
		t.Fatalf("want replicas (the HPA's) and cpu (the operator's), got %+v", ss)
	}
	for _, s := range ss {
		r, ok := s.Rules["flux"].(flux.SuggestedRule)
		want := flux.SuggestedTarget{Group: "apps", Kind: "Deployment", Name: "web", Namespace: "shop"}
		if !ok || len(r.Paths) != 1 || r.Paths[0] != s.Pointer || r.Target != want {
			t.Errorf("%s: rule %+v, want the pointer and a target naming the Deployment", s.Pointer, s.Rules)
		}
	}
	if advice := strings.Join(ss[1].Advice, "\n"); !strings.Contains(advice, "follows the item's position") || !strings.Contains(advice, "a Helm upgrade still applies") {
		t.Errorf("cpu, a keyed item in Git: want the list-index and Helm upgrade advice, got %q", advice)
	}
}

// Before the rule kustomize-controller reverts both fields; with the
// suggested spec.ignore entry our judge says ignored, and audit finds no
// error in the Kustomization as it would be committed.
func TestSuggestFluxRulesAreChecked(t *testing.T) {
	live, desired, ks := suggestFixture(t)
	docs, err := source.LoadFiles([]string{filepath.Join("testdata", "suggest", "kustomization.yaml")}, nil, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := flux.New(flux.Options{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	judged := explained(t, live, desired, before)
	e := fluxSuggest(t)
	ss := suggest.Build(judged, []suggestapi.Semantics{e})
	if len(ss) != 2 {
		t.Fatalf("suggestions for the two reverted fields: %+v", ss)
	}
	suggest.CheckAll(context.Background(), ss, []suggest.EngineObject{{Object: ks, Engine: e}}, judged, live, desired,
		suggest.CheckOptions{Extractors: []audit.Extractor{flux.RulesFromDocuments}})
	for _, s := range ss {
		if len(s.Checks) != 1 || !s.Checks[0].OK || s.Checks[0].Verdict != model.Ignored || len(s.NotChecked) != 0 {
			t.Fatalf("%s: checks %+v, not checked %v", s.Pointer, s.Checks, s.NotChecked)
		}
		for _, f := range s.Checks[0].Audit {
			if f.Severity == audit.SeverityError || f.Check == auditapi.CheckNoJustification || f.Check == auditapi.CheckTooBroad {
				t.Errorf("%s: audit %s: %s", s.Pointer, f.Name, f.Message)
			}
		}
	}

	// A rule that does not cover the field fails the check: the check can fail.
	s := ss[0]
	s.Rules = map[model.Engine]suggestapi.Rule{"flux": flux.SuggestedRule{Paths: []string{"/spec/paused"}, Target: flux.SuggestedTarget{Kind: "Deployment", Name: "web"}}}
	c, err := suggest.Check(context.Background(), e, s, ks, judged, live, desired, suggest.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.OK || c.Verdict != model.Reverted {
		t.Fatalf("a rule on another path passed: %+v", c)
	}
}

// The snippets as printed by `suggest`, and the Kustomization with the
// rule as the check judges it, reviewed in testdata/suggest.
func TestSuggestFluxSnippetsGolden(t *testing.T) {
	live, desired, ks := suggestFixture(t)
	e := fluxSuggest(t)
	var b strings.Builder
	for _, s := range suggest.Build(explained(t, live, desired), []suggestapi.Semantics{e}) {
		for _, k := range []string{"Kustomization", "HelmRelease"} {
			b.WriteString("## " + s.FieldPath + " " + k + "\n" + s.Snippet(e, k))
		}
		withRule, err := s.WithRule(e, ks)
		if err != nil {
			t.Fatal(err)
		}
		y, err := s.YAML(e, withRule)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("## " + s.FieldPath + " Kustomization with the rule\n" + string(y))
	}
	testutil.Golden(t, filepath.Join("testdata", "suggest", "snippets.golden"), []byte(b.String()))
}
