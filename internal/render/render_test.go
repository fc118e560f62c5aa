package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestJoin(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	outside := t.TempDir()
	for _, d := range []string{"a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "c"), filepath.Join(root, "in")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want, err string }{
		{path: "./a/b", want: filepath.Join(root, "a/b")},
		{path: "", want: root},
		{path: "a/../c", want: filepath.Join(root, "c")},
		{path: "in", want: filepath.Join(root, "c")},
		{path: "/a/b", want: filepath.Join(root, "a/b")},
		{path: "../x", err: "leaves the source directory"},
		{path: "a/../../x", err: "leaves the source directory"},
		{path: "out", err: "through a symlink"},
		{path: "nope", err: "no such file"},
	} {
		got, err := Join(root, c.path)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Join(%q) = %q, %v; want error %q", c.path, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Join(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
}

func TestLookupFromFiles(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "vars"}}}
	env := &Env{Files: []*unstructured.Unstructured{cm}}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	if got, err := env.Lookup(context.Background(), gvk, "any", "vars"); err != nil || got != cm {
		t.Errorf("a file object without a namespace matches any: %v %v", got, err)
	}
	if _, err := env.Lookup(context.Background(), gvk, "any", "other"); !apierrors.IsNotFound(err) {
		t.Errorf("missing object: %v, want NotFound", err)
	}
}

func TestMask(t *testing.T) {
	env := &Env{}
	env.AddSecret(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"stringData": map[string]any{"a": "hunter22\n"}}}, "hunter22", "ab") // "ab": too short to mask in text
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"data": map[string]any{"url": "https://u:hunter22@h", "x": "ab"}}}
	env.MaskObject(obj)
	data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
	if data["url"] != "https://u:***@h" || data["x"] != "ab" {
		t.Errorf("data = %v", data)
	}
	if got := env.MaskText("error near hunter22"); got != "error near ***" {
		t.Errorf("MaskText = %q", got)
	}
	sec := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"data": map[string]any{"k": "c2VjcmV0"}}}
	env.MaskObject(sec)
	if v, _, _ := unstructured.NestedString(sec.Object, "data", "k"); v != "***" {
		t.Errorf("Secret data = %q", v)
	}
}
