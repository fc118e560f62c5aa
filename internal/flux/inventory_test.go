package flux

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// kustomize-controller reconciles what its inventory lists, labels or not
// (make differential seed 4048: a client-side kubectl apply dropped the
// ownership labels, and the next apply put them back with the Git values).
// An object the controller never wrote is not looked up at all.
func TestOwnerFromTheInventoryWhenLabelsAreGone(t *testing.T) {
	ks := obj(t, kustomization+`status:
  inventory:
    entries:
    - {id: prod_cfg__ConfigMap, v: v1}
`)
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{ks}}
	a := newTestAdapter(t, reader)
	live := obj(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: prod
  labels: {config: x}
  managedFields:
  - {manager: kustomize-controller, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:data: {f:LOG_LEVEL: {}}}}
  - {manager: kubectl-client-side-apply, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:metadata: {f:labels: {f:config: {}}}}}
data: {LOG_LEVEL: debug}
`)
	desired := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: prod}, data: {LOG_LEVEL: info}}`)
	d := drift("/data/LOG_LEVEL", model.Changed, "debug", "kubectl-edit/Update")
	d.Desired = "info"
	rep := judge(t, a, live, desired, d)
	if len(rep.Owners) != 1 || rep.Owners[0].Ref() != "Kustomization flux-system/apps" || !strings.Contains(rep.Owners[0].Via, "inventory") {
		t.Fatalf("owner = %+v, want Kustomization flux-system/apps via its inventory", rep.Owners)
	}
	if v := verdictAt(t, rep, "/data/LOG_LEVEL"); v.Kind != model.Reverted {
		t.Errorf("%s %q", v.Kind, v.Reason)
	}

	// Never written by kustomize-controller: no owner, and no LIST.
	stranger := live.DeepCopy()
	stranger.SetManagedFields(stranger.GetManagedFields()[1:])
	b := newTestAdapter(t, &testutil.Reader{})
	if o := b.ownerOf(context.Background(), stranger); o != nil {
		t.Errorf("owner of an object Flux never wrote: %+v", o)
	}
	if b.inventory != nil {
		t.Error("the inventories were read for an object Flux never wrote")
	}
}
