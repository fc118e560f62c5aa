package suggest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/audit"
	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func load(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	return testutil.ReadObject(t, "testdata", name)
}

// report computes the drift of live against desired and attributes each
// field to its managers, as explain does.
func report(t *testing.T, live, desired *unstructured.Unstructured) *model.Report {
	t.Helper()
	ix, err := managedfields.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	drifts, err := diff.Compute(desired, live, diff.Options{Index: ix, Owned: func(p string) bool { return len(ix.Owners(live, p)) > 0 }})
	if err != nil {
		t.Fatal(err)
	}
	r := model.NewReport(model.ResourceID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: live.GetNamespace(), Name: live.GetName()}, model.SourceFile)
	for _, d := range drifts {
		if d.FieldPath == "" {
			d.FieldPath = ix.FieldPath(live, d.Path)
		}
		if len(d.Managers) == 0 {
			d.Managers = ix.Owners(live, d.Path)
		}
		d.Cause = model.CauseUnknown
		for _, m := range d.Managers {
			if !managedfields.IsGitOpsManager(m.Manager) {
				d.Cause = managedfields.Classify(m.Manager, m.Operation, m.Subresource)
				break
			}
		}
		r.Drifts = append(r.Drifts, d)
	}
	return r
}

func judgeWith(t *testing.T, a model.Adapter, r *model.Report, live, desired *unstructured.Unstructured) *model.Report {
	t.Helper()
	again := rejudged(r)
	if err := a.Judge(context.Background(), model.JudgeInput{Live: live, Desired: desired, Report: again}); err != nil {
		t.Fatal(err)
	}
	return again
}

func verdict(r *model.Report, pointer string, e model.Engine) model.VerdictKind {
	for _, d := range r.Drifts {
		if d.Path == pointer {
			for _, v := range d.Verdicts {
				if v.Engine == e {
					return v.Kind
				}
			}
		}
	}
	return ""
}

func docs(t *testing.T, names ...string) []source.Document {
	t.Helper()
	var out []source.Document
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		d, err := source.Decode(b, n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d...)
	}
	return out
}

const (
	replicas = "/spec/replicas"
	cpu      = "/spec/template/spec/containers/0/resources/limits/cpu"
)

func TestBuildShapes(t *testing.T) {
	live, desired := load(t, "flux-live.yaml"), load(t, "desired.yaml")
	ss := Build(report(t, live, desired))
	if len(ss) != 2 {
		t.Fatalf("want 2 suggestions (replicas by the HPA, cpu by the operator), got %+v", ss)
	}
	byPath := map[string]Suggestion{}
	for _, s := range ss {
		byPath[s.Pointer] = s
	}
	r := byPath[replicas]
	if len(r.Argo.ManagedFieldsManagers) != 0 || len(r.Argo.JSONPointers) != 1 || r.Argo.JSONPointers[0] != replicas || !r.Argo.RespectIgnoreDifferences {
		t.Errorf("replicas in Git: a sync writes it, so a JSON pointer with RespectIgnoreDifferences, got %+v", r.Argo)
	}
	// A field Git lacks, written by a stable manager: only the diff
	// matters, and the manager rule covers what it writes next.
	added := forDrift(model.ResourceID{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, model.FieldDrift{
		Path: "/metadata/annotations/autoscaling", FieldPath: ".metadata.annotations.autoscaling", Change: model.Added,
		Cause: model.CauseAutoscaler, Managers: []model.ManagerRef{{Manager: "vpa-updater", Operation: "Update"}}})
	if got := strings.Join(added.Argo.ManagedFieldsManagers, ","); got != "vpa-updater" || added.Argo.RespectIgnoreDifferences {
		t.Errorf("a field Git lacks, stable manager: want managedFieldsManagers only, got %+v", added.Argo)
	}
	if !strings.Contains(strings.Join(r.Advice, "\n"), "remove spec.replicas from Git") {
		t.Errorf("replicas with an HPA: want the remove-from-Git advice, got %q", r.Advice)
	}
	c := byPath[cpu]
	want := `.spec.template.spec.containers[] | select(.name == "app") | .resources.limits.cpu`
	if len(c.Argo.JQPathExpressions) != 1 || c.Argo.JQPathExpressions[0] != want || len(c.Argo.ManagedFieldsManagers) != 0 {
		t.Errorf("cpu: the generic manager \"manager\" is not stable, a keyed item gives jq %q, got %+v", want, c.Argo)
	}
	if c.Flux.Paths[0] != cpu || c.Flux.Target.Kind != "Deployment" || c.Flux.Target.Name != "web" {
		t.Errorf("cpu flux rule: %+v", c.Flux)
	}
}

func TestJQPath(t *testing.T) {
	for in, want := range map[string]string{
		".spec.replicas": ".spec.replicas",
		".spec.template.spec.containers[name=app].ports[containerPort=80,protocol=TCP].hostPort": `.spec.template.spec.containers[] | select(.name == "app") | .ports[] | select(.containerPort == 80 and .protocol == "TCP") | .hostPort`,
		`.metadata.annotations["example.com/x"]`:                                                 `.metadata.annotations["example.com/x"]`,
	} {
		if got := JQPath(in); got != want {
			t.Errorf("JQPath(%s) = %s, want %s", in, got, want)
		}
	}
}

// Flux: before the rule kustomize-controller reverts both fields; with the
// suggested spec.ignore entry our judge says ignored, and audit finds no
// error in the Kustomization as it would be committed.
func TestFluxSuggestionsAreChecked(t *testing.T) {
	live, desired := load(t, "flux-live.yaml"), load(t, "desired.yaml")
	r := report(t, live, desired)
	before, err := flux.New(flux.Options{Documents: docs(t, "kustomization.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	judged := judgeWith(t, before, r, live, desired)
	for _, p := range []string{replicas, cpu} {
		if v := verdict(judged, p, model.EngineFlux); v != model.Reverted {
			t.Fatalf("%s before the rule: %s, want reverted", p, v)
		}
	}
	ks := load(t, "kustomization.yaml")
	for _, s := range Build(judged) {
		c, err := Check(context.Background(), s, ks, judged, live, desired, CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !c.OK || c.Verdict != model.Ignored {
			t.Errorf("%s: %+v", s.Pointer, c)
		}
		for _, f := range c.Audit {
			if f.Severity == audit.SeverityError || f.Check == audit.CheckNoJustification || f.Check == audit.CheckTooBroad {
				t.Errorf("%s: audit %s: %s", s.Pointer, f.Name, f.Message)
			}
		}
	}
}

// Argo CD: auto-sync with selfHeal reverts both; with the suggested
// ignoreDifferences entry (managedFieldsManagers for the HPA, jq for the
// operator's container item) our judge says ignored.
func TestArgoSuggestionsAreChecked(t *testing.T) {
	live, desired := load(t, "argo-live.yaml"), load(t, "argo-desired.yaml")
	r := report(t, live, desired)
	before, err := argocd.New(argocd.Options{Documents: docs(t, "application.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	judged := judgeWith(t, before, r, live, desired)
	for _, p := range []string{replicas, cpu} {
		if v := verdict(judged, p, model.EngineArgoCD); v != model.Reverted {
			t.Fatalf("%s before the rule: %s, want reverted", p, v)
		}
	}
	app := load(t, "application.yaml")
	ss := Build(judged)
	if len(ss) != 2 {
		t.Fatalf("suggestions: %+v", ss)
	}
	for _, s := range ss {
		c, err := Check(context.Background(), s, app, judged, live, desired, CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !c.OK || c.Verdict != model.Ignored {
			t.Errorf("%s: %+v", s.Pointer, c)
		}
		for _, f := range c.Audit {
			if f.Severity == audit.SeverityError || f.Check == audit.CheckNoJustification {
				t.Errorf("%s: audit %s: %s", s.Pointer, f.Name, f.Message)
			}
		}
	}
}

// A rule that does not cover the field fails the check: the check can fail.
func TestCheckFailsForAWrongRule(t *testing.T) {
	live, desired := load(t, "flux-live.yaml"), load(t, "desired.yaml")
	r := report(t, live, desired)
	s := Build(r)[0]
	s.Flux.Paths = []string{"/spec/paused"}
	c, err := Check(context.Background(), s, load(t, "kustomization.yaml"), r, live, desired, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.OK {
		t.Fatalf("a rule on another path passed: %+v", c)
	}
}

// The snippets as printed by `suggest`, reviewed in testdata.
func TestSnippetsGolden(t *testing.T) {
	live, desired := load(t, "flux-live.yaml"), load(t, "desired.yaml")
	var b strings.Builder
	for _, s := range Build(report(t, live, desired)) {
		for _, k := range []string{KindApplication, KindKustomization, KindHelmRelease} {
			b.WriteString("## " + s.FieldPath + " " + k + "\n" + s.Snippet(k))
		}
		withRule, err := s.WithRule(load(t, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		y, err := s.YAML(withRule)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("## " + s.FieldPath + " Kustomization with the rule\n" + string(y))
	}
	testutil.Golden(t, filepath.Join("testdata", "snippets.golden"), []byte(b.String()))
}
