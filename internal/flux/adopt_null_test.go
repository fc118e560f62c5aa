package flux

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// An ignore rule on a path Git sets and the live object lacks: Flux
// adopts the missing live value, replacing the path in its payload with
// null (fluxcd/pkg ssa computeDriftedPaths, applyDriftResult), and the API
// server decodes that null into the field's type. A ResourceQuota's hard
// limit (a map of quantities) becomes "0": the controller changed it
// (make differential seed 40101, kustomize-controller v1.9.6; the tool
// said ignored in -f and --server-dry-run). A PDB's minAvailable (a
// pointer) stays unset: ignored (seed 4295).
func TestIgnoreAdoptsANullTheTypeTurnsIntoAValue(t *testing.T) {
	for _, tc := range []struct {
		name, rule, live, desired, path string
		want                            model.VerdictKind
	}{
		{name: "quantity map", rule: "/spec/hard/limits.memory", path: "/spec/hard/limits.memory", want: model.Reverted,
			live:    `{apiVersion: v1, kind: ResourceQuota, metadata: {name: q, namespace: prod, resourceVersion: "3", labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}, managedFields: [{manager: kustomize-controller, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:metadata: {f:labels: {f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}}, f:spec: {f:hard: {f:pods: {}, f:requests.cpu: {}}}}}]}, spec: {hard: {pods: "10", requests.cpu: "4"}}}`,
			desired: `{apiVersion: v1, kind: ResourceQuota, metadata: {name: q, namespace: prod}, spec: {hard: {pods: "10", limits.memory: 16Gi}}}`},
		{name: "pointer", rule: "/spec/minAvailable", path: "/spec/minAvailable", want: model.Ignored,
			live:    `{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: q, namespace: prod, resourceVersion: "3", labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}, managedFields: [{manager: kustomize-controller, operation: Apply, apiVersion: policy/v1, fieldsType: FieldsV1, fieldsV1: {f:metadata: {f:labels: {f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}}, f:spec: {f:selector: {}}}}]}, spec: {selector: {matchLabels: {app: web}}}}`,
			desired: `{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: q, namespace: prod, labels: {tier: gold}}, spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks := obj(t, `{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {name: apps, namespace: flux-system}, spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: repo}, ignore: [{paths: ["`+tc.rule+`"]}]}}`)
			a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks}})
			d := drift(tc.path, model.Removed, nil)
			d.Desired = "x"
			drifts := []model.FieldDrift{d}
			// Another change of Git's makes the object applied at all:
			// a limit removed (owned by kustomize-controller), a label
			// added.
			if tc.name == "quantity map" {
				drifts = append(drifts, drift("/spec/hard/requests.cpu", model.Added, "4", "kustomize-controller/Apply"))
			} else {
				tier := drift("/metadata/labels/tier", model.Removed, nil)
				tier.Desired = "gold"
				drifts = append(drifts, tier)
			}
			rep := judge(t, a, obj(t, tc.live), obj(t, tc.desired), drifts...)
			if v := verdictAt(t, rep, tc.path); v.Kind != tc.want {
				t.Errorf("%s: %s %q, want %s", tc.path, v.Kind, v.Reason, tc.want)
			}
		})
	}
}
