package flux

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// With get/list-only RBAC short of CRDs, the refused LIST is not asked
// again for every custom resource a scan judges.
func TestCRDSchemaReadOncePerAdapterWhenForbidden(t *testing.T) {
	r := &testutil.Reader{Forbidden: true}
	a := newTestAdapter(t, r)
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Backup"}
	for range 3 {
		if root := a.crdSchema(context.Background(), gvk); root != nil {
			t.Fatalf("crdSchema with every read Forbidden: got %v, want nil", root)
		}
	}
	if len(r.Lists) != 1 {
		t.Errorf("LISTs of CRDs over three lookups: %d, want 1", len(r.Lists))
	}
}

// schemaMissingRequired walks the manifest as the structural schema's
// validation does on create: a required field counts only where its
// parent is present, and a default fills it.
func TestSchemaMissingRequired(t *testing.T) {
	var root map[string]any
	if err := yaml.Unmarshal([]byte(`
type: object
properties:
  spec:
    type: object
    required: [schedule, retention]
    properties:
      schedule: {type: string}
      retention: {type: integer, default: 7}
      window:
        type: object
        required: [start]
        properties: {start: {type: string}}
      targets:
        type: array
        items: {type: object, required: [name], properties: {name: {type: string}}}
`), &root); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ spec, want string }{
		{`{schedule: x}`, ""},
		{`{}`, "/spec/schedule"},
		{`{schedule: x, window: {}}`, "/spec/window/start"},
		{`{schedule: x, targets: [{name: a}, {}]}`, "/spec/targets/1/name"},
	} {
		o := obj(t, `{apiVersion: v1, kind: X, spec: `+tc.spec+`}`)
		if got := schemaMissingRequired(root, o.Object, ""); got != tc.want {
			t.Errorf("spec %s: got %q, want %q", tc.spec, got, tc.want)
		}
	}
}
