package flux

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
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

// An ignore rule on a custom resource's path Git sets and the live object
// lacks: Flux adopts the missing live value as null after the dry-run of
// the raw manifest passed, and the API server rejects null for a field
// its structural schema does not make nullable: the apply fails and every
// field stays (make differential seed 47371, R18, kustomize-controller
// v1.9.6: "spec.template.spec.serviceAccountName: Invalid value: \"null\"";
// the tool said the edited schedule was reverted). A nullable field takes
// the null: the rule keeps it unset. With --server-dry-run the API server
// is asked with the adopted payload.
func TestIgnoreAdoptsANullTheCRDSchemaRejects(t *testing.T) {
	for _, tc := range []struct {
		name, field  string
		serverDryRun bool
		want         model.VerdictKind
	}{
		{name: "file, not nullable", field: "serviceAccount", want: model.ApplyFails},
		{name: "file, nullable", field: "note", want: model.Reverted},
		{name: "server dry-run, rejected", field: "serviceAccount", serverDryRun: true, want: model.ApplyFails},
		{name: "server dry-run, accepted", field: "note", serverDryRun: true, want: model.Reverted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := "/spec/" + tc.field
			ks := obj(t, `{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {name: apps, namespace: flux-system}, spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: repo}, ignore: [{paths: ["`+p+`"], target: {kind: Backup}}]}}`)
			a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks, obj(t, backupCRD)}})
			live := appliedBackup{fluxSpec: `{}`, manager: "kubectl-edit", otherFields: `{f:spec: {f:schedule: {}}}`, spec: `{schedule: "0 6 * * *"}`}.object(t)
			desired := obj(t, `{apiVersion: diff.drift.test/v1, kind: Backup, metadata: {name: web, namespace: prod}, spec: {schedule: "0 5 * * *", `+tc.field+`: backup-sa}}`)
			if tc.serverDryRun {
				a.serverDryRun = true
				a.dryRunner = func(_ context.Context, sent *unstructured.Unstructured, _ string) (*unstructured.Unstructured, error) {
					if v, ok := jsonpointer.Get(sent.Object, p); ok && v == nil && tc.field == "serviceAccount" {
						return nil, apierrors.NewInvalid(schema.GroupKind{Group: "diff.drift.test", Kind: "Backup"}, "web",
							field.ErrorList{field.TypeInvalid(field.NewPath("spec", tc.field), "null", "must be of type string")})
					}
					merged := live.DeepCopy()
					for k, v := range sent.Object["spec"].(map[string]any) {
						_ = unstructured.SetNestedField(merged.Object, v, "spec", k)
					}
					return merged, nil
				}
			}
			missing := drift(p, model.Removed, nil)
			missing.Desired = "backup-sa"
			schedule := drift("/spec/schedule", model.Changed, "0 6 * * *", "kubectl-edit/Update")
			schedule.Desired = "0 5 * * *"
			rep := judge(t, a, live, desired, missing, schedule)
			if v := verdictAt(t, rep, "/spec/schedule"); v.Kind != tc.want {
				t.Errorf("/spec/schedule: %s %q, want %s", v.Kind, v.Reason, tc.want)
			}
			if v := verdictAt(t, rep, p); tc.want == model.ApplyFails && (v.Kind != model.ApplyFails || !strings.Contains(v.Reason, "null")) {
				t.Errorf("%s: %s %q, want apply-fails saying why (null)", p, v.Kind, v.Reason)
			}
		})
	}
}

// As TestIgnoreAdoptsANullTheCRDSchemaRejects, but what makes the object
// applied is only kubectl's client-side apply record: the cleanup deletes
// its last-applied-configuration and hands the field it set (which Git now
// sets alike) to kustomize-controller. That first apply fails on the
// adopted null; the next reconcile patches nothing, nothing outside the
// rule drifts, no apply happens, and the Kustomization is Ready with the
// path still unset: the rule keeps it (make differential seed 73332,
// kustomize-controller v1.9.6; the tool said apply-fails, as if the
// annotation were handed over and removed by every apply).
func TestIgnoreAdoptsANullOnlyOnceAfterAClientSideApply(t *testing.T) {
	ks := obj(t, `{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {name: apps, namespace: flux-system}, spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: repo}, ignore: [{paths: ["/spec/suspend"], target: {kind: Backup}}]}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks, obj(t, backupCRD)}})
	// kubectl's record, and Flux v1's checksum, which the cleanup
	// deletes as well.
	for _, tc := range []struct{ key, value string }{
		{"kubectl.kubernetes.io/last-applied-configuration", `'{"apiVersion":"diff.drift.test/v1","kind":"Backup","metadata":{"annotations":{},"name":"web","namespace":"prod"},"spec":{"retention":30,"schedule":"0 2 * * *"}}'`},
		{"fluxcd.io/sync-checksum", "0a1b2c"},
	} {
		live := appliedBackup{
			annotations: `{` + tc.key + `: ` + tc.value + `}`,
			fluxSpec:    `{f:schedule: {}}`, manager: "kubectl-client-side-apply",
			otherFields: `{f:metadata: {f:annotations: {.: {}, f:` + tc.key + `: {}}}, f:spec: {f:retention: {}}}`,
			spec:        `{schedule: "0 2 * * *", retention: 30}`,
		}.object(t)
		desired := obj(t, `{apiVersion: diff.drift.test/v1, kind: Backup, metadata: {name: web, namespace: prod}, spec: {schedule: "0 2 * * *", retention: 30, suspend: true}}`)
		suspend := drift("/spec/suspend", model.Removed, nil)
		suspend.Desired = true
		rep := judge(t, a, live, desired, suspend)
		if v := verdictAt(t, rep, "/spec/suspend"); v.Kind != model.Ignored {
			t.Errorf("%s: /spec/suspend: %s %q, want ignored", tc.key, v.Kind, v.Reason)
		}
	}
}
