package flux

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestManagedEntriesDirectMatchConverted: reading managedFields from the
// object's own maps gives what GetManagedFields and a JSON decode of each
// fieldsV1 give, on real objects the API server wrote (scan's captures:
// server-side applies as kustomize-controller and argocd-controller,
// kubectl edits), and declines anything not plainly well formed, which
// then takes the converted path.
func TestManagedEntriesDirectMatchConverted(t *testing.T) {
	var objs []*unstructured.Unstructured
	for _, f := range []string{"list-deployments.json", "list-configmaps.json", "list-secrets.json"} {
		raw, err := os.ReadFile("../scan/testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Items []map[string]any }
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		for _, it := range list.Items {
			objs = append(objs, &unstructured.Unstructured{Object: it})
		}
	}
	if len(objs) < 10 {
		t.Fatalf("only %d captured objects", len(objs))
	}
	for _, o := range objs {
		direct, n, ok := managedEntriesDirect(o)
		if !ok {
			t.Errorf("%s: a real object was not read directly", o.GetName())
			continue
		}
		conv, cn := managedEntriesConverted(o)
		if n != cn || !reflect.DeepEqual(direct, conv) {
			t.Errorf("%s: direct %d %+v\nconverted %d %+v", o.GetName(), n, direct, cn, conv)
		}
	}

	entry := func(mut func(m map[string]any)) *unstructured.Unstructured {
		m := map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "time": "2026-12-01T10:00:00Z",
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:a": map[string]any{}}}}
		mut(m)
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"managedFields": []any{m}}}}
	}
	for name, o := range map[string]*unstructured.Unstructured{
		"manager not a string": entry(func(m map[string]any) { m["manager"] = int64(3) }),
		"bad time":             entry(func(m map[string]any) { m["time"] = "yesterday" }),
		"null time":            entry(func(m map[string]any) { m["time"] = nil }),
		"fieldsV1 leaf":        entry(func(m map[string]any) { m["fieldsV1"] = map[string]any{"f:data": "x"} }),
		"fieldsV1 a string":    entry(func(m map[string]any) { m["fieldsV1"] = "f:data" }),
		"unknown key":          entry(func(m map[string]any) { m["extra"] = "x" }),
		"entry not an object":  {Object: map[string]any{"metadata": map[string]any{"managedFields": []any{"x"}}}},
		"list not a list":      {Object: map[string]any{"metadata": map[string]any{"managedFields": "x"}}},
	} {
		if _, _, ok := managedEntriesDirect(o); ok {
			t.Errorf("%s: read directly, want the converted path", name)
		}
		// Whatever the path, parseManagedFields answers as the converted one.
		got, n := parseManagedFields(o)
		want, wn := managedEntriesConverted(o)
		if n != wn || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %d %+v, want %d %+v", name, n, got, wn, want)
		}
	}
	for name, o := range map[string]*unstructured.Unstructured{
		"no managedFields": {Object: map[string]any{"metadata": map[string]any{"name": "x"}}},
		"no fieldsV1":      entry(func(m map[string]any) { delete(m, "fieldsV1") }),
		"subresource":      entry(func(m map[string]any) { m["subresource"] = "scale" }),
	} {
		direct, n, ok := managedEntriesDirect(o)
		conv, cn := managedEntriesConverted(o)
		if !ok || n != cn || !reflect.DeepEqual(direct, conv) {
			t.Errorf("%s: direct ok=%v %d %+v, converted %d %+v", name, ok, n, direct, cn, conv)
		}
	}
}
