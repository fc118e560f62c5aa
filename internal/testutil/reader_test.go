package testutil

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestReaderAnswersAsTheAPIServer(t *testing.T) {
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	a := Object(t, "{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: argocd}}")
	b := Object(t, "{apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: shop}}")
	ctx := context.Background()
	r := &Reader{Objects: []*unstructured.Unstructured{a, b}, Allowed: map[string]bool{"argocd": true, "": true}}
	if got, err := r.Get(ctx, cm, "argocd", "a"); err != nil || got.GetName() != "a" || got == a {
		t.Errorf("Get = %v, %v; want a copy of a", got, err)
	}
	if _, err := r.Get(ctx, cm, "argocd", "b"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a missing object: %v, want NotFound", err)
	}
	if _, err := r.Get(ctx, cm, "shop", "b"); !apierrors.IsForbidden(err) {
		t.Errorf("Get outside Allowed: %v, want Forbidden", err)
	}
	if l, err := r.List(ctx, cm, "", ""); err != nil || len(l) != 2 {
		t.Errorf("List of all namespaces = %d objects, %v; want 2", len(l), err)
	}
	if l, err := r.List(ctx, cm, "argocd", ""); err != nil || len(l) != 1 {
		t.Errorf("List of argocd = %d objects, %v; want 1", len(l), err)
	}
	if r.Gets != 3 || len(r.Lists) != 2 || r.Lists[0] != "" || r.Lists[1] != "argocd" {
		t.Errorf("Gets %d, Lists %q", r.Gets, r.Lists)
	}
	if _, err := (&Reader{Forbidden: true}).List(ctx, cm, "argocd", ""); !apierrors.IsForbidden(err) {
		t.Errorf("Forbidden reader: %v", err)
	}
}
