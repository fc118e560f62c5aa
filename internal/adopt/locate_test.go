package adopt

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// The prod overlay renames web to prod-web in namespace shop; each live
// value goes where kustomize took it from: the image tag to the overlay's
// images field, replicas and limits to its strategic-merge patch, the
// probe period into the JSON 6902 patch's value, the env value to the base
// resource, and a new field next to the overlay's other values.
func TestKustomizeSources(t *testing.T) {
	dir := testutil.CopyTree(t, "testdata/kustomize", t.TempDir())
	obj := Object{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "prod-web"}
	live := map[string]any{"spec": map[string]any{"replicas": 5.0, "template": map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "app", "image": "shop/web:1.4.1",
			"env":       []any{map[string]any{"name": "LOG_LEVEL", "value": "debug"}},
			"resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}},
		},
	}}}}}
	fields := []Field{
		{Pointer: "/spec/replicas", Value: 5.0},
		{Pointer: "/spec/template/spec/containers/0/image", Value: "shop/web:1.4.1"},
		{Pointer: "/spec/template/spec/containers/0/env/0/value", Value: "debug"},
		{Pointer: "/spec/template/spec/containers/0/resources/limits/cpu", Value: "1"},
		{Pointer: "/spec/template/spec/containers/0/resources/limits/memory", Value: "1Gi"},
		{Pointer: "/spec/template/spec/containers/0/readinessProbe/periodSeconds", Value: 30.0},
	}
	edits, skips, err := Plan(KustomizeLocator{Dir: filepath.Join(dir, "prod")}, obj, live, fields)
	if err != nil {
		t.Fatal(err)
	}
	if len(skips) > 0 {
		t.Fatalf("skipped: %+v", skips)
	}
	var files []string
	for _, e := range edits {
		rel, _ := filepath.Rel(dir, e.File.Path)
		files = append(files, rel)
		golden(t, filepath.Join("kustomize-golden", filepath.Base(filepath.Dir(rel))+"-"+filepath.Base(rel)), e.After)
	}
	sort.Strings(files)
	want := []string{"base/deployment.yaml", "prod/kustomization.yaml", "prod/probe.yaml", "prod/resources.yaml"}
	if d := cmp.Diff(want, files); d != "" {
		t.Fatalf("files edited (-want +got):\n%s", d)
	}
	// Planning writes nothing.
	b, _ := os.ReadFile(filepath.Join(dir, "base/deployment.yaml"))
	orig, _ := os.ReadFile("testdata/kustomize/base/deployment.yaml")
	if string(b) != string(orig) {
		t.Fatal("Plan wrote a file")
	}
	if err := Write(edits); err != nil {
		t.Fatal(err)
	}
	// Adopting again finds nothing to change.
	edits, _, err = Plan(KustomizeLocator{Dir: filepath.Join(dir, "prod")}, obj, live, fields)
	if err != nil || len(edits) != 0 {
		t.Fatalf("second adoption: %d edits, %v", len(edits), err)
	}
}

func TestFilesLocatorMissing(t *testing.T) {
	_, _, err := Plan(FilesLocator{Files: []string{filepath.Join(t.TempDir(), "gone.yaml")}}, web, nil, []Field{{Pointer: "/spec/replicas", Value: 1.0}})
	if err == nil {
		t.Fatal("no error for a missing file")
	}
}

// A patch's target selects as kustomize selects it: every field an
// anchored regular expression, empty meaning any; the version is not
// checked (Object has none).
func TestPatchTargetSelects(t *testing.T) {
	web := Object{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	for _, c := range []struct {
		target types.Selector
		want   bool
	}{
		{types.Selector{}, true},
		{types.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Kind: "Deployment"}, Name: "web"}}, true},
		{types.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Group: "apps", Version: "v2", Kind: "Deploy.*"}, Name: "w.b", Namespace: "shop|prod"}}, true},
		{types.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Kind: "Deploy"}}}, false},
		{types.Selector{ResId: resid.ResId{Name: "we"}}, false},
		{types.Selector{ResId: resid.ResId{Namespace: "prod"}}, false},
		{types.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Group: "batch"}}}, false},
		{types.Selector{ResId: resid.ResId{Name: "(web"}}, false},
	} {
		if got := selects(&c.target, web); got != c.want {
			t.Errorf("target %s selects %s: %v, want %v", c.target.String(), web, got, c.want)
		}
	}
}
