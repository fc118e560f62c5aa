package argocd

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestThreeWayDiffMergeKeyNotScalar: a list item whose merge key is a map
// makes strategicpatch panic (it compares keys with ==); the three-way
// diff fails with one line instead.
func TestThreeWayDiffMergeKeyNotScalar(t *testing.T) {
	obj := func(value string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "env": []any{
					map[string]any{"name": map[string]any{"x": int64(1)}, "value": value},
					map[string]any{"name": map[string]any{"x": int64(1)}, "value": "2"},
				}}}}}}}}
	}
	dr, err := threeWayDiff(obj("1"), obj("3"), obj("1"))
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %+v, %v; want a one-line error", dr, err)
	}
	t.Log(err)
}
