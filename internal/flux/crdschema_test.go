package flux

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

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
