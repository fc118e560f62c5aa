package flux

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// A field the API server derived from one the apply reverts changes in the
// same write (make differential seeds 7235, 9177: kustomize-controller's
// apply put externalTrafficPolicy back and the healthCheckNodePort went).
func TestDerivedFieldFollowsItsRevertedSource(t *testing.T) {
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}}
	live := obj(t, `
apiVersion: v1
kind: Service
metadata:
  name: lb
  namespace: prod
  labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:type: {}}}
  - manager: kubectl-patch
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:externalTrafficPolicy: {}, f:healthCheckNodePort: {}}}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  healthCheckNodePort: 31234
`)
	desired := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: lb, namespace: prod}, spec: {type: LoadBalancer}}`)
	a := newTestAdapter(t, reader)
	rep := judge(t, a, live, desired, drift("/spec/externalTrafficPolicy", model.Added, "Local", "kubectl-patch/Update"))
	if v := verdictAt(t, rep, "/spec/externalTrafficPolicy"); v.Kind != model.Reverted {
		t.Fatalf("externalTrafficPolicy: %s %q, want reverted (the cleanup hands it over)", v.Kind, v.Reason)
	}
	if v := verdictAt(t, rep, "/spec/healthCheckNodePort"); v.Kind != model.Reverted || !strings.Contains(v.Reason, "/spec/externalTrafficPolicy") {
		t.Errorf("healthCheckNodePort: %s %q, want reverted with externalTrafficPolicy", v.Kind, v.Reason)
	}

	// The source stays (another manager's field the apply leaves): so
	// does the derived field, which is not listed.
	live.SetManagedFields(nil)
	other := drift("/spec/externalTrafficPolicy", model.Added, "Local", "platform-operator/Apply")
	rep = judge(t, a, live, desired, other)
	for _, d := range rep.Drifts {
		if d.Path == "/spec/healthCheckNodePort" {
			t.Errorf("healthCheckNodePort listed (%+v) though its source stays", d.Verdicts)
		}
	}
}
