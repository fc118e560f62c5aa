package managedfields

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestInLastApplied(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "labels": map[string]any{"app": "web", "team": "shop"},
			"annotations": map[string]any{LastAppliedAnnotation: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"team":"shop"}},"data":{"a":"1"}}`}},
		"data": map[string]any{"a": "1", "b": "2"},
	}}
	ix, err := Parse(obj)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		"/metadata/labels/team": true,  // applied, so removed from Git = drift
		"/metadata/labels/app":  false, // added by someone else
		"/data/a":               true,
		"/data/b":               false,
		"/data/c":               false,
	} {
		if got := ix.InLastApplied(obj, p); got != want {
			t.Errorf("InLastApplied(%s) = %v, want %v", p, got, want)
		}
	}
	delete(obj.GetAnnotations(), LastAppliedAnnotation)
	obj.SetAnnotations(nil)
	if ix.InLastApplied(obj, "/data/a") {
		t.Error("no annotation: nothing is in last-applied")
	}
}
