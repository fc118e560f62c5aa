package managedfields

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// fuzzBody is the object a bare FieldsV1 input is attached to, so that
// hostile field sets meet real associative lists.
const fuzzBody = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},
"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"spec":{"containers":[
{"name":"app","image":"a:1","args":["x","y"],"ports":[{"containerPort":80,"protocol":"TCP"}],"env":[{"name":"A","value":"1"}]},
{"name":"sidecar","image":"s:1"}]}}},"status":{"replicas":2}}`

// FuzzParse feeds Parse either a whole object (JSON with metadata) or a bare
// FieldsV1 set attached to a Deployment. Parse must never panic; when it
// succeeds, Leaves, Owners and FieldPath must not panic either and must
// agree with each other.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"f:spec":{"f:replicas":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return
		}
		obj := &unstructured.Unstructured{Object: m}
		if _, whole := m["metadata"]; !whole {
			// The fast FieldsV1 encoder must agree with encoding/json.
			std, err1 := json.Marshal(m)
			ours, err2 := appendFieldsJSON(nil, m)
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("encoders disagree on errors: %v / %v", err1, err2)
			}
			if err1 == nil {
				var a, b fieldpath.Set
				ea, eb := a.FromJSON(bytes.NewReader(std)), b.FromJSON(bytes.NewReader(ours))
				if (ea == nil) != (eb == nil) || (ea == nil && !a.Equals(&b)) {
					t.Fatalf("encoders disagree: %v / %v", ea, eb)
				}
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(fuzzBody), &body); err != nil {
				t.Fatal(err)
			}
			body["metadata"].(map[string]any)["managedFields"] = []any{
				map[string]any{"manager": "fuzz", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": m},
				map[string]any{"manager": "kustomize-controller", "operation": "Apply", "fieldsType": "FieldsV1", "time": "2026-01-01T00:00:00Z",
					"fieldsV1": map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{`k:{"name":"app"}`: map[string]any{"f:image": map[string]any{}}}}}}}},
			}
			obj = &unstructured.Unstructured{Object: body}
		}
		ix, err := Parse(obj)
		if err != nil {
			if ix != nil {
				t.Fatalf("Parse returned an index and an error")
			}
			return
		}
		leaves := ix.Leaves(obj)
		if !sort.SliceIsSorted(leaves, func(i, j int) bool { return leaves[i].Pointer < leaves[j].Pointer }) {
			t.Fatalf("leaves not sorted")
		}
		for _, l := range leaves {
			if len(l.Owners) == 0 {
				t.Fatalf("leaf %s without owners", l.Pointer)
			}
			owners := ix.Owners(obj, l.Pointer)
			if len(owners) < len(l.Owners) {
				t.Fatalf("leaf %s: Leaves says %d owners, Owners %d", l.Pointer, len(l.Owners), len(owners))
			}
			_ = ix.ClientSideDefault(obj, l.Pointer)
			if fp := ix.FieldPath(obj, l.Pointer); fp == "" {
				t.Fatalf("empty FieldPath for %s", l.Pointer)
			}
		}
		for _, p := range []string{"", "/spec", "/spec/template/spec/containers/0/image", "/spec/template/spec/containers/1", "/metadata/labels/app", "/spec/template/spec/containers/0/ports/0", "/x~1y", "/a~"} {
			_ = ix.Owners(obj, p)
			if fp := ix.FieldPath(obj, p); fp == "" && !strings.HasPrefix(p, "/") && p != "" {
				t.Fatalf("empty FieldPath for %q", p)
			}
			_ = ix.ListType(obj, p)
		}
		_ = FieldPath(obj, "/spec/template/spec/containers/0/image")
		for _, e := range ix.Entries() {
			_ = Classify(e.Manager, e.Operation, e.Subresource)
		}
	})
}
