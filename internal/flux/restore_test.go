package flux

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// R2 (make differential seeds 9000, 30066, 30088, measured on
// kustomize-controller v1.9.6): a write drifts a field, then a client-side
// apply of Git's file puts Git's value back; kubectl-client-side-apply now
// owns the field and the controller's apply after its managedFields
// cleanup writes the same value: nothing changes. Inferred mode said
// `reverted`. It cannot see Git, so it says `unknown` unless the
// generation shows that the apply was the only spec write since
// kustomize-controller created the object (e2e conformance
// client-side-apply: replicas 2 -> 3, reverted).
func TestInferredClientSideApplyMayPutGitsValueBack(t *testing.T) {
	managed := fluxApplyAll + `
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:tier: {}}}, f:spec: {f:replicas: {}}}
`
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}})
	for _, tc := range []struct {
		name       string
		generation int64
		desired    *unstructured.Unstructured
		replicas   model.VerdictKind
	}{
		{name: "an earlier write, then the apply", generation: 3, replicas: model.Unknown},
		{name: "the apply was the only write", generation: 2, replicas: model.Reverted},
		{name: "generation not counted", generation: 1, replicas: model.Unknown},
		{name: "-f knows Git", generation: 3, replicas: model.Reverted,
			desired: obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: api, namespace: prod, labels: {app: web}}, spec: {replicas: 2}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := liveDeployment(t, "api", "    tier: gold", "", managed)
			live.SetGeneration(tc.generation)
			rep := judge(t, a, live, tc.desired,
				drift("/spec/replicas", model.Changed, int64(5), "kubectl-client-side-apply/Update"),
				drift("/metadata/labels/tier", model.Added, "gold", "kubectl-client-side-apply/Update"))
			v := verdictAt(t, rep, "/spec/replicas")
			if v.Kind != tc.replicas {
				t.Errorf("replicas: %s %q, want %s", v.Kind, v.Reason, tc.replicas)
			}
			if v.Kind == model.Unknown && !strings.Contains(v.Reason, "-f FILE") {
				t.Errorf("replicas: unknown without naming -f: %q", v.Reason)
			}
			// A label write leaves the generation as it is: nothing
			// tells whether the apply put Git's value back.
			if l := verdictAt(t, rep, "/metadata/labels/tier"); tc.desired == nil && l.Kind != model.Unknown {
				t.Errorf("label: %s %q, want unknown in inferred mode", l.Kind, l.Reason)
			}
		})
	}
}
