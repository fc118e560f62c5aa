package drift

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

// TestRenderedRendersOwnerOnce: objects of one owner share one
// render; a failing owner is one error naming it and its file, for each of
// its objects, rendered once too; an object without an owner mark, or
// whose owner the flags leave out, is NotRendered (scan infers it).
func TestRenderedRendersOwnerOnce(t *testing.T) {
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
	s := NewRendered(env, []render.Renderer{r}, nil, nil)
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c"} {
		got, ref, _, err := s.Desired(ctx, configMap(n, map[string]string{"owner": "app"}), "")
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if got.GetName() != n || ref.Name != "app" {
			t.Errorf("%s: got %s from %s", n, got.GetName(), ref)
		}
	}
	for range 2 {
		_, _, _, err := s.Desired(ctx, configMap("x", map[string]string{"owner": "broken"}), "")
		if err == nil || !strings.Contains(err.Error(), "Owner/ns/broken: chart fails to template") || !strings.Contains(err.Error(), "owners/owners.yaml") {
			t.Errorf("broken owner: %v; want one line naming Owner/ns/broken and owners/owners.yaml", err)
		}
	}
	if r.renders["app"] != 1 || r.renders["broken"] != 1 {
		t.Errorf("renders %v, want each owner rendered once", r.renders)
	}
	var nr *NotRendered
	if _, _, _, err := s.Desired(ctx, configMap("a", nil), ""); !errors.As(err, &nr) {
		t.Errorf("no owner mark: %v, want NotRendered", err)
	}
	if _, _, _, err := s.Desired(ctx, configMap("zz", map[string]string{"owner": "app"}), ""); err == nil || errors.As(err, &nr) || !strings.Contains(err.Error(), "no document is") {
		t.Errorf("object not in the render: %v", err)
	}
	if c := s.Counts(); c != (RenderCounts{Compared: 3, Failed: 3, Unowned: 1}) {
		t.Errorf("counts %+v, want compared 3, failed 3, unowned 1", c)
	}

	only := NewRendered(env, []render.Renderer{r}, nil, []render.Ref{{GVK: ownerGVK, Namespace: "ns", Name: "other"}})
	if _, _, _, err := only.Desired(ctx, configMap("a", map[string]string{"owner": "app"}), ""); !errors.As(err, &nr) {
		t.Errorf("owner left out by the flags: %v, want NotRendered", err)
	}
}
