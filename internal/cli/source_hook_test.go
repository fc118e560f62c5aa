package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// countingRenderer owns objects labelled owner=NAME (engine object
// Owner/NAME in namespace "ns") and renders one ConfigMap per name in its
// spec.names, counting its renders; an owner named "broken" fails.
type countingRenderer struct{ renders map[string]int }

var ownerGVK = schema.GroupVersionKind{Group: "test.example.com", Version: "v1", Kind: "Owner"}

func (r *countingRenderer) Handles(obj *unstructured.Unstructured) bool {
	return obj.GroupVersionKind().GroupKind() == ownerGVK.GroupKind()
}

func (r *countingRenderer) Owner(live *unstructured.Unstructured) (render.Ref, bool) {
	name, ok := live.GetLabels()["owner"]
	return render.Ref{GVK: ownerGVK, Namespace: "ns", Name: name}, ok
}

func (r *countingRenderer) Render(_ context.Context, _ *render.Env, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	r.renders[obj.GetName()]++
	if obj.GetName() == "broken" {
		return nil, errors.New("chart fails to template")
	}
	names, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "names")
	var out []*unstructured.Unstructured
	for _, n := range names {
		out = append(out, configMap(n, nil))
	}
	return out, nil
}

func configMap(name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "ns"}, "data": map[string]any{"k": name}}}
	u.SetLabels(labels)
	return u
}

// TestSourceDesiredRendersOwnerOnce: objects of one owner share one
// render; a failing owner is one error naming it and its file, for each of
// its objects, rendered once too; an object without an owner mark, or
// whose owner the flags leave out, is notRendered (scan infers it).
func TestSourceDesiredRendersOwnerOnce(t *testing.T) {
	dir := t.TempDir()
	owners := `apiVersion: test.example.com/v1
kind: Owner
metadata: {name: app, namespace: ns}
spec: {names: [a, b, c]}
---
apiVersion: test.example.com/v1
kind: Owner
metadata: {name: broken, namespace: ns}
`
	if err := os.MkdirAll(filepath.Join(dir, "owners"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owners", "owners.yaml"), []byte(owners), 0o644); err != nil {
		t.Fatal(err)
	}
	env, err := render.NewEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &countingRenderer{renders: map[string]int{}}
	s := newSourceDesired(env, nil, nil, nil)
	s.renderers = []render.Renderer{r}
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c"} {
		got, ref, _, err := s.desired(ctx, configMap(n, map[string]string{"owner": "app"}), "")
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if got.GetName() != n || ref.Name != "app" {
			t.Errorf("%s: got %s from %s", n, got.GetName(), ref)
		}
	}
	for range 2 {
		_, _, _, err := s.desired(ctx, configMap("x", map[string]string{"owner": "broken"}), "")
		if err == nil || !strings.Contains(err.Error(), "Owner/ns/broken: chart fails to template") || !strings.Contains(err.Error(), "owners/owners.yaml") {
			t.Errorf("broken owner: %v; want one line naming Owner/ns/broken and owners/owners.yaml", err)
		}
	}
	if r.renders["app"] != 1 || r.renders["broken"] != 1 {
		t.Errorf("renders %v, want each owner rendered once", r.renders)
	}
	var nr *notRendered
	if _, _, _, err := s.desired(ctx, configMap("a", nil), ""); !errors.As(err, &nr) {
		t.Errorf("no owner mark: %v, want notRendered", err)
	}
	if _, _, _, err := s.desired(ctx, configMap("zz", map[string]string{"owner": "app"}), ""); err == nil || errors.As(err, &nr) || !strings.Contains(err.Error(), "no document is") {
		t.Errorf("object not in the render: %v", err)
	}
	if c, f, u := s.counts(); c != 3 || f != 3 || u != 1 {
		t.Errorf("counts compared=%d failed=%d unowned=%d, want 3 3 1", c, f, u)
	}

	only := newSourceDesired(env, nil, nil, []render.Ref{{GVK: ownerGVK, Namespace: "ns", Name: "other"}})
	only.renderers = []render.Renderer{r}
	if _, _, _, err := only.desired(ctx, configMap("a", map[string]string{"owner": "app"}), ""); !errors.As(err, &nr) {
		t.Errorf("owner left out by the flags: %v, want notRendered", err)
	}
}

// TestNormalizeSourceSameAsFile: normalize --diff --source diffs live with
// the rendered object exactly as --diff -f with the hand-rendered file.
func TestNormalizeSourceSameAsFile(t *testing.T) {
	live := "testdata/render/service-web-live.yaml"
	rendered, stderr, code, _ := run(t, KubectlFrontend, "normalize", "-f", live, "--engine", "flux", "--diff", "--source", renderRepo)
	if code != ExitDrift {
		t.Fatalf("--source: exit %d, want 1: %s", code, stderr)
	}
	file, stderr, code, _ := run(t, KubectlFrontend, "normalize", "-f", live, "--engine", "flux", "--diff", "-f", "testdata/render/service-web-hand-rendered.yaml")
	if code != ExitDrift {
		t.Fatalf("-f: exit %d, want 1: %s", code, stderr)
	}
	if rendered != file {
		t.Errorf("--source diff:\n%s\n-f diff:\n%s", rendered, file)
	}
	if !strings.Contains(rendered, "port") {
		t.Errorf("the port drift is missing:\n%s", rendered)
	}
}

func TestNormalizeSourceErrors(t *testing.T) {
	live := "testdata/render/service-web-live.yaml"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", live, "--source", renderRepo}, "--source gives the desired state: it needs --diff"},
		{[]string{"-f", live, "--diff", "--source", renderRepo, "-f", live}, "--diff --source needs the live object alone"},
		{[]string{"-f", live, "--diff", "--source", renderRepo, "--kustomization", "a/b", "--helmrelease", "c/d"}, "normalize renders one owner"},
		{[]string{"-f", live, "--diff", "--source", renderRepo, "--kustomization", "flux-system/nope"}, "Kustomization/flux-system/nope: not found"},
	} {
		_, stderr, code, _ := run(t, KubectlFrontend, append([]string{"normalize", "--engine", "flux"}, c.args...)...)
		if code != ExitFailure || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestScanSourceOutcome: scan --source fails (exit 2) only when owners
// failed to render and no object was compared or inferred; objects
// without a rendered owner are one warning.
func TestScanSourceOutcome(t *testing.T) {
	for _, c := range []struct {
		compared, failed, unowned int
		code                      int
		warn                      string
	}{
		{compared: 0, failed: 2, code: ExitFailure},
		{compared: 1, failed: 2},
		{failed: 2, unowned: 1, warn: "1 objects another manager wrote have no owner that --source renders"},
		{},
	} {
		var errOut strings.Builder
		o := &ScanOptions{GlobalOptions: &GlobalOptions{}, source: &sourceDesired{compared: c.compared, failed: c.failed, unowned: c.unowned}}
		o.ErrOut = &errOut
		res := &scan.Result{}
		err := o.sourceOutcome(res)
		var ee *ExitError
		switch {
		case c.code != 0 && (!errors.As(err, &ee) || ee.Code != c.code):
			t.Errorf("%+v: got %v, want exit %d", c, err, c.code)
		case c.code == 0 && err != nil:
			t.Errorf("%+v: got %v, want no error", c, err)
		}
		if c.warn != "" && (!strings.Contains(errOut.String(), c.warn) || len(res.Warnings) != 1) {
			t.Errorf("%+v: stderr %q, warnings %v; want %q", c, errOut.String(), res.Warnings, c.warn)
		}
		if c.warn == "" && errOut.Len() > 0 {
			t.Errorf("%+v: unexpected stderr %q", c, errOut.String())
		}
	}
}
