package managedfields

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// longEnv is a Deployment whose one container has n env vars, all owned
// by kustomize-controller's apply: the shape of issue 29's 10 MB object.
func longEnv(n int) *unstructured.Unstructured {
	env := make([]any, n)
	fenv := map[string]any{}
	for i := range n {
		name := fmt.Sprintf("VAR_%06d", i)
		env[i] = map[string]any{"name": name, "value": "v"}
		fenv[fmt.Sprintf(`k:{"name":%q}`, name)] = map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:value": map[string]any{}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "big", "namespace": "shop", "managedFields": []any{map[string]any{
			"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "manager": "kustomize-controller", "operation": "Apply", "time": "2026-12-01T00:00:00Z",
			"fieldsV1": map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{
				`k:{"name":"app"}`: map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:env": fenv}}}}}},
		}}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "app", "env": env}}}}},
	}}
}

// TestListTypeLearntOncePerList: the list type of a keyed list is found
// by walking the list's whole node of managedFields; it is asked for
// every item, so it must be learnt once per list, not once per item (a
// list of n items cost n² before: issue 29, 100k env vars).
func TestListTypeLearntOncePerList(t *testing.T) {
	obj := longEnv(2000)
	ix, err := Parse(obj)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if o := ix.Owners(obj, fmt.Sprintf("/spec/template/spec/containers/0/env/%d/value", i)); len(o) != 1 || o[0].Manager != "kustomize-controller" {
			t.Fatalf("item %d: owners %+v", i, o)
		}
	}
	if n := len(ix.listTypes); n == 0 || n > 3 {
		t.Errorf("list types learnt %d times for 2 lists (containers, env)", n)
	}
}

// BenchmarkOwnersLongList: Owners of every item of a list of n items;
// ns/op per item must stay flat from 1k to 10k.
func BenchmarkOwnersLongList(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		obj := longEnv(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				ix, err := Parse(obj)
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					ix.Owners(obj, fmt.Sprintf("/spec/template/spec/containers/0/env/%d/value", i))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/item")
		})
	}
}
