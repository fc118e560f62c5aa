package flux

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// A server-side apply of another manager took automountServiceAccountToken
// from kustomize-controller and its next apply left it out, so the API
// server removed it; Git sets false, and kustomize-controller's apply
// writes false back (make differential seed 40223, class R6: -f and
// --server-dry-run named nothing, the shared comparison reading false as
// an omitempty zero). A zero the typed round trip drops (a Deployment's
// paused, omitempty) is not sent, so it is not listed.
func TestZeroTheApplyWritesBack(t *testing.T) {
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}}
	live := obj(t, `
apiVersion: v1
kind: ServiceAccount
metadata:
  name: app
  namespace: prod
  labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::1:role/admin"}
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}}}
  - manager: platform-operator
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:annotations: {f:eks.amazonaws.com/role-arn: {}}}}
`)
	desired := obj(t, `{apiVersion: v1, kind: ServiceAccount, metadata: {name: app, namespace: prod}, automountServiceAccountToken: false}`)
	const p = "/automountServiceAccountToken"
	for _, dryRun := range []bool{false, true} {
		a := newTestAdapter(t, reader)
		if dryRun {
			a.serverDryRun = true
			a.dryRunner = func(context.Context, *unstructured.Unstructured, string) (*unstructured.Unstructured, error) {
				m := live.DeepCopy()
				m.Object["automountServiceAccountToken"] = false
				return m, nil
			}
		}
		rep := judge(t, a, live, desired)
		if v := verdictAt(t, rep, p); v.Kind != model.Reverted {
			t.Errorf("server-dry-run %v: %s %s %q, want reverted (the apply writes false back)", dryRun, p, v.Kind, v.Reason)
		}
	}

	dep := liveDeployment(t, "api", "", "", fluxApplyAll)
	paused := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: api, namespace: prod, labels: {app: web}, annotations: {keep: "1"}}, spec: {paused: false, replicas: 5, template: {spec: {containers: [{name: app, image: nginx:2}]}}}}`)
	rep := judge(t, newTestAdapter(t, reader), dep, paused)
	for _, d := range rep.Drifts {
		if d.Path == "/spec/paused" {
			t.Errorf("/spec/paused listed %+v: the typed round trip drops it (omitempty), the apply does not send it", d.Verdicts)
		}
	}
}
