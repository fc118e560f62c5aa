package scan

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type countingReader struct {
	gets, lists int
	forbidList  bool
}

func (c *countingReader) Get(_ context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	c.gets++
	if name == "missing" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "x"}, name)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u, nil
}

func (c *countingReader) List(_ context.Context, gvk schema.GroupVersionKind, _, _ string) ([]unstructured.Unstructured, error) {
	c.lists++
	if c.forbidList {
		return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "kustomizations"}, "", errors.New("cluster scope"))
	}
	var out []unstructured.Unstructured
	for _, n := range []string{"apps", "infra"} {
		u := unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("flux-system")
		u.SetName(n)
		out = append(out, u)
	}
	return out, nil
}

var (
	kustomizationGVK = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}
	configMapGVK     = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
)

func TestCachingReaderReadsEachObjectOnce(t *testing.T) {
	inner := &countingReader{}
	c := NewCachingReader(inner)
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		obj, err := c.Get(ctx, configMapGVK, "argocd", "argocd-cm")
		if err != nil || obj.GetName() != "argocd-cm" {
			t.Fatalf("Get: %v %v", obj, err)
		}
		obj.SetName("mutated") // callers get copies
		if _, err := c.Get(ctx, configMapGVK, "argocd", "missing"); !apierrors.IsNotFound(err) {
			t.Fatalf("want the remembered NotFound, got %v", err)
		}
	}
	if inner.gets != 2 || inner.lists != 0 {
		t.Errorf("inner reads: %d gets, %d lists; want 2 gets", inner.gets, inner.lists)
	}
}

func TestCachingReaderServesEngineObjectsFromOneList(t *testing.T) {
	inner := &countingReader{}
	c := NewCachingReader(inner)
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		for _, n := range []string{"apps", "infra"} {
			obj, err := c.Get(ctx, kustomizationGVK, "flux-system", n)
			if err != nil || obj.GetName() != n {
				t.Fatalf("Get %s: %v %v", n, obj, err)
			}
			obj.SetName("mutated")
		}
		if _, err := c.Get(ctx, kustomizationGVK, "flux-system", "gone"); !apierrors.IsNotFound(err) {
			t.Fatalf("absent from the LIST: want NotFound, got %v", err)
		}
	}
	if inner.lists != 1 || inner.gets != 0 {
		t.Errorf("inner reads: %d lists, %d gets; want one LIST", inner.lists, inner.gets)
	}
}

func TestCachingReaderFallsBackToGetsWhenListForbidden(t *testing.T) {
	inner := &countingReader{forbidList: true}
	c := NewCachingReader(inner)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		if obj, err := c.Get(ctx, kustomizationGVK, "team-a", "apps"); err != nil || obj.GetName() != "apps" {
			t.Fatalf("Get: %v %v", obj, err)
		}
	}
	if inner.lists != 1 || inner.gets != 1 {
		t.Errorf("inner reads: %d lists, %d gets; want 1 and 1", inner.lists, inner.gets)
	}
}
