package scan

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type countingReader struct{ gets, lists int }

func (c *countingReader) Get(_ context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	c.gets++
	if name == "missing" {
		return nil, errors.New("not found")
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u, nil
}

func (c *countingReader) List(context.Context, schema.GroupVersionKind, string, string) ([]unstructured.Unstructured, error) {
	c.lists++
	return []unstructured.Unstructured{{Object: map[string]any{"kind": "X"}}}, nil
}

func TestCachingReaderReadsEachObjectOnce(t *testing.T) {
	inner := &countingReader{}
	c := NewCachingReader(inner)
	gvk := schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		obj, err := c.Get(ctx, gvk, "flux-system", "apps")
		if err != nil || obj.GetName() != "apps" {
			t.Fatalf("Get: %v %v", obj, err)
		}
		obj.SetName("mutated") // callers get copies
		if _, err := c.Get(ctx, gvk, "flux-system", "missing"); err == nil {
			t.Fatal("want the remembered error")
		}
		if items, err := c.List(ctx, gvk, "", ""); err != nil || len(items) != 1 {
			t.Fatalf("List: %v %v", items, err)
		}
	}
	if inner.gets != 2 || inner.lists != 1 {
		t.Errorf("inner reads: %d gets, %d lists; want 2 and 1", inner.gets, inner.lists)
	}
}
