package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestLocate: a path without a kustomization file is its .yaml/.yml files
// plus, whole, the subdirectories holding a kustomization file (as Flux's
// generator lists them); a path with one is kustomize; a symlink out of the
// checkout is refused.
func TestLocate(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) { testutil.WriteFile(t, root, name, body) }
	write("apps/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	write("apps/nested/b.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
	write("apps/README.md", "not a manifest\n")
	write("apps/sub/kustomization.yaml", "resources: [c.yaml]\n")
	write("apps/sub/c.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	env, err := render.NewEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	ks := func(path string) *unstructured.Unstructured {
		return testutil.Object(t, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  interval: 1m\n  path: "+path+"\n  sourceRef: {kind: GitRepository, name: flux-system}\n")
	}
	loc, err := New().Locate(context.Background(), env, ks("./apps"))
	if err != nil {
		t.Fatal(err)
	}
	rel := func(ps []string) string {
		var out []string
		for _, p := range ps {
			r, _ := filepath.Rel(env.Root, p)
			out = append(out, filepath.ToSlash(r))
		}
		return strings.Join(out, ",")
	}
	if loc.Kind != render.LocateFiles || rel(loc.Files) != "apps/a.yaml,apps/nested/b.yml" || rel(loc.KustomizeDirs) != "apps/sub" {
		t.Errorf("got %s files %s dirs %s", loc.Kind, rel(loc.Files), rel(loc.KustomizeDirs))
	}
	if loc, err = New().Locate(context.Background(), env, ks("./apps/sub")); err != nil || loc.Kind != render.LocateKustomize || rel([]string{loc.Dir}) != "apps/sub" {
		t.Errorf("apps/sub: %+v %v", loc, err)
	}
	if _, err := New().Locate(context.Background(), env, ks("../..")); err == nil || !strings.Contains(err.Error(), "leaves the source directory") {
		t.Errorf("../..: %v", err)
	}
	outside := filepath.Join(t.TempDir(), "x.yaml")
	if err := os.WriteFile(outside, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "apps", "x.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := New().Locate(context.Background(), env, ks("./apps")); err == nil || !strings.Contains(err.Error(), "through a symlink") {
		t.Errorf("symlink out: %v", err)
	}
}

// TestLocateHelmRelease: the chart of the checkout's HelmRelease, and its
// inline values as a layer in the file that holds it.
func TestLocateHelmRelease(t *testing.T) {
	env := testEnv(t)
	for _, f := range env.Files {
		if f.GetKind() != "HelmRelease" {
			continue
		}
		loc, err := New().Locate(context.Background(), env, f)
		if err != nil {
			t.Fatal(err)
		}
		if loc.Kind != render.LocateHelm || !strings.HasPrefix(loc.Dir, env.Root) {
			t.Errorf("%s: %+v", f.GetName(), loc)
		}
		_, hasValues := f.Object["spec"].(map[string]any)["values"]
		if hasValues != (len(loc.Values) == 1) {
			t.Errorf("%s: values layers %+v", f.GetName(), loc.Values)
		}
		for _, v := range loc.Values {
			if v.Prefix != "/spec/values" || env.FileOf(f) != v.File || v.File == "" {
				t.Errorf("%s: layer %+v", f.GetName(), v)
			}
		}
		return
	}
	t.Fatal("no HelmRelease in testdata/repo")
}
