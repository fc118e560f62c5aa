package engine_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	_ "github.com/kubectl-drift/kubectl-drift/internal/engines"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

func TestRegistryAnswersFromTheEngines(t *testing.T) {
	if got := strings.Join(engine.Choices(), ","); got != "auto,argocd,flux" {
		t.Errorf("Choices = %s", got)
	}
	if err := engine.Validate("flux"); err != nil {
		t.Error(err)
	}
	if err := engine.Validate("spinnaker"); err == nil || err.Error() != `invalid --engine "spinnaker": must be auto, argocd or flux` {
		t.Errorf("Validate(spinnaker) = %v", err)
	}
	if n := len(engine.Selected("auto")); n != 2 {
		t.Errorf("auto selects %d engines", n)
	}
	if o := engine.Others("argocd"); len(o) != 1 || o[0].Name != "flux" {
		t.Errorf("Others(argocd) = %+v", o)
	}
	if engine.Others("auto") != nil {
		t.Error("auto leaves an engine out")
	}
	// source.toolkit.fluxcd.io is listed too: a render reads each owner's
	// source for its ref, one LIST per kind rather than a GET per owner.
	for _, c := range []struct {
		group string
		want  bool
	}{{"argoproj.io", true}, {"kustomize.toolkit.fluxcd.io", true}, {"source.toolkit.fluxcd.io", true}, {"apps", false}} {
		if engine.OwnsGroup(c.group) != c.want {
			t.Errorf("OwnsGroup(%s) != %v", c.group, c.want)
		}
	}
	// The engines own their managers' names; managedfields asks them.
	// "argocd" is Argo CD's too: its in-process kubectl auth reconcile
	// writes RBAC objects under that name (argo-inf, seeds 50000, 50207).
	for m, want := range map[string]bool{"argocd-controller": true, "kustomize-controller": true, "gotk-helm-controller": true, " Helm-Controller ": true, "kubectl-edit": false, "argocd": true, "argocd-server-x": false} {
		if managedfields.IsGitOpsManager(m) != want {
			t.Errorf("IsGitOpsManager(%q) != %v", m, want)
		}
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm"}}}
	if d, ok := engine.EngineOf(cm); !ok || d.Name != "argocd" {
		t.Errorf("EngineOf(argocd-cm) = %v, %v", d.Name, ok)
	}
	if got := engine.Or([]string{"a", "b", "c"}); got != "a, b or c" {
		t.Errorf("Or = %q", got)
	}
}

func TestRegisterAfterReadPanics(t *testing.T) {
	_ = engine.All()
	defer func() {
		if recover() == nil {
			t.Error("Register after the registry was read did not panic")
		}
	}()
	engine.Register(engine.Descriptor{Name: "late", IsManager: func(string) bool { return false }})
}

// The engines' control planes come from their descriptors: Argo CD
// declares its namespace flag, Flux none (a Flux object's namespace is
// always given).
func TestControlPlaneOf(t *testing.T) {
	cp, ok := engine.ControlPlaneOf("argoproj.io")
	if !ok || cp.Flag != "argocd-namespace" || cp.Default != "argocd" {
		t.Errorf("ControlPlaneOf(argoproj.io) = %+v, %v; want --argocd-namespace, default argocd", cp, ok)
	}
	for _, g := range []string{"kustomize.toolkit.fluxcd.io", "apps", ""} {
		if cp, ok := engine.ControlPlaneOf(g); ok {
			t.Errorf("ControlPlaneOf(%q) = %+v, want none", g, cp)
		}
	}
}

// The owner kinds come from the engines' descriptors, each with the flag
// that names it and where a name alone is (issue 34: render's
// --kustomization/--helmrelease/--app and serve's cache used to be written
// in internal/cli).
func TestOwnerKindOf(t *testing.T) {
	for _, c := range []struct {
		engine, kind, gvk, flag, namespace string
	}{
		{"argocd", "Application", "argoproj.io/v1alpha1, Kind=Application", "app", ""},
		{"flux", "Kustomization", "kustomize.toolkit.fluxcd.io/v1, Kind=Kustomization", "kustomization", "flux-system"},
		{"flux", "HelmRelease", "helm.toolkit.fluxcd.io/v2, Kind=HelmRelease", "helmrelease", "flux-system"},
	} {
		k, ok := engine.OwnerKindOf(model.Engine(c.engine), c.kind)
		if !ok || k.GVK.String() != c.gvk || k.Flag != c.flag || k.Namespace != c.namespace {
			t.Errorf("OwnerKindOf(%s, %s) = %+v, %v; want %s --%s in %q", c.engine, c.kind, k, ok, c.gvk, c.flag, c.namespace)
		}
	}
	for _, c := range [][2]string{{"argocd", "Kustomization"}, {"flux", "Application"}, {"toy", "Application"}} {
		if k, ok := engine.OwnerKindOf(model.Engine(c[0]), c[1]); ok {
			t.Errorf("OwnerKindOf(%s, %s) = %+v, want none", c[0], c[1], k)
		}
	}
}
