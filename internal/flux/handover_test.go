package flux

import (
	"context"
	"fmt"
	"strconv"
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

// hpaPatchedLive is the measured state of make differential seed 6108: Git
// removed minReplicas after `kubectl patch` had set it (to 1, the API
// server's default), so kubectl-patch owns it and kustomize-controller
// does not.
func hpaPatchedLive(t *testing.T, minReplicas int) *unstructured.Unstructured {
	return obj(t, `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: prod
  resourceVersion: "7"
  labels: {app: web, kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    apiVersion: autoscaling/v2
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:labels: {f:app: {}, f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}}
      f:spec: {f:maxReplicas: {}, f:scaleTargetRef: {f:apiVersion: {}, f:kind: {}, f:name: {}}}
  - manager: kubectl-patch
    operation: Update
    apiVersion: autoscaling/v2
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:minReplicas: {}}}
spec:
  minReplicas: `+itoa(minReplicas)+`
  maxReplicas: 5
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
`)
}

func itoa(i int) string { return strconv.Itoa(i) }

const hpaGit = `{apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, metadata: {name: web, namespace: prod, labels: {app: web}}, spec: {maxReplicas: 5, scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}}}`

// With --server-dry-run, a field the managedFields cleanup hands to
// kustomize-controller and its apply then drops gets its verdict from a
// dry-run of that removal (the dry-run apply runs before the cleanup, like
// the controller's, and keeps the field): the API server defaults it back
// (left-alone), removes it (reverted), or rejects the object (apply-fails:
// make differential seed 20008, a custom resource's required field).
func TestServerDryRunOfTheApplyAfterTheCleanup(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}, "web",
		field.ErrorList{field.Required(field.NewPath("spec", "minReplicas"), "")})
	for _, tc := range []struct {
		name string
		live int
		// answer is what the API server returns for the removal.
		answer func(live *unstructured.Unstructured) (*unstructured.Unstructured, error)
		want   model.VerdictKind
		has    string
	}{
		{"defaulted back", 1, func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return live.DeepCopy(), nil // minReplicas 1 again
		}, model.LeftAlone, "same value back"},
		{"removed", 1, func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			o := live.DeepCopy()
			unstructured.RemoveNestedField(o.Object, "spec", "minReplicas")
			return o, nil
		}, model.Reverted, "removes it"},
		{"rejected", 3, func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return nil, invalid
		}, model.ApplyFails, "spec.minReplicas: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}})
			a.serverDryRun = true
			live := hpaPatchedLive(t, tc.live)
			a.dryRunner = func(context.Context, *unstructured.Unstructured, string) (*unstructured.Unstructured, error) {
				return live.DeepCopy(), nil // before the cleanup: kubectl-patch's field stays
			}
			var sent []map[string]any
			a.patchRunner = func(_ context.Context, l *unstructured.Unstructured, ops []map[string]any) (*unstructured.Unstructured, error) {
				sent = ops
				return tc.answer(l)
			}
			rep := judge(t, a, live, obj(t, hpaGit), drift("/spec/minReplicas", model.Added, tc.live, "kubectl-patch/Update"))
			v := verdictAt(t, rep, "/spec/minReplicas")
			if v.Kind != tc.want || !strings.Contains(v.Reason, tc.has) {
				t.Fatalf("got %s %q, want %s containing %q", v.Kind, v.Reason, tc.want, tc.has)
			}
			if len(sent) != 1 || sent[0]["op"] != "remove" || sent[0]["path"] != "/spec/minReplicas" {
				t.Errorf("dry-run patch %v, want one removal of /spec/minReplicas", sent)
			}
			if want := tc.want != model.LeftAlone; (rep.ExitCode() == 1) != want {
				t.Errorf("exit code %d, want drift=%v", rep.ExitCode(), want)
			}
		})
	}
}

// With -f, an HPA's minReplicas the cleanup hands over holds the API
// server's default (1): the apply drops it and the server fills 1 again
// (make differential seed 6108); another value is reverted.
func TestFileHPAMinReplicasDefault(t *testing.T) {
	for _, tc := range []struct {
		live int
		want model.VerdictKind
	}{{1, model.LeftAlone}, {3, model.Reverted}} {
		a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}})
		live := hpaPatchedLive(t, tc.live)
		v0, _ := jsonpointer.Get(live.Object, "/spec/minReplicas")
		rep := judge(t, a, live, obj(t, hpaGit), drift("/spec/minReplicas", model.Added, v0, "kubectl-patch/Update"))
		if v := verdictAt(t, rep, "/spec/minReplicas"); v.Kind != tc.want {
			t.Errorf("minReplicas %d: got %s %q, want %s", tc.live, v.Kind, v.Reason, tc.want)
		}
	}
}

// backupCRD is the differential corpus' Backup CRD, cut to what the tests
// read: schedule required, retention defaulted, serviceAccount a plain
// string (not nullable, no default), note nullable.
const backupCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backups.diff.drift.test}
spec:
  group: diff.drift.test
  names: {kind: Backup, plural: backups}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [schedule]
            properties:
              schedule: {type: string}
              retention: {type: integer, default: 7}
              suspend: {type: boolean}
              serviceAccount: {type: string}
              note: {type: string, nullable: true}
`

// appliedBackup is a Backup that kustomize-controller applied (its Apply
// entry owns Flux's ownership labels and the fields fluxSpec names) and
// that manager, if any, then changed by an Update (owning otherFields).
// force adds the force label; annotations and spec are YAML flow maps.
type appliedBackup struct {
	force                                             bool
	annotations, fluxSpec, manager, otherFields, spec string
}

func (b appliedBackup) object(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	labels := `kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system`
	if b.force {
		labels += `, kustomize.toolkit.fluxcd.io/force: enabled`
	}
	annotations, update := "", ""
	if b.annotations != "" {
		annotations = "\n  annotations: " + b.annotations
	}
	if b.manager != "" {
		update = `
  - manager: ` + b.manager + `
    operation: Update
    apiVersion: diff.drift.test/v1
    fieldsType: FieldsV1
    fieldsV1: ` + b.otherFields
	}
	return obj(t, `
apiVersion: diff.drift.test/v1
kind: Backup
metadata:
  name: web
  namespace: prod
  resourceVersion: "3"
  labels: {`+labels+`}`+annotations+`
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    apiVersion: diff.drift.test/v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}}, f:spec: `+b.fluxSpec+`}`+update+`
spec: `+b.spec+`
`)
}

// With -f, a custom resource's field the cleanup hands over and the apply
// drops: the CRD's schema decides. Required: the apply fails and the
// field stays (make differential seed 20008, measured: Ready=False
// "spec.schedule: Required value"); defaulted to the live value: nothing
// changes; otherwise it is removed. With force on, the required field's
// first apply fails, the cleanup stays, the next dry-run fails, and force
// deletes the object, whose re-creation from a manifest without the field
// is rejected too (make differential seed 71526, measured: the Backup was
// gone after the reconciles).
func TestFileCustomResourceFieldTheCleanupHandsOver(t *testing.T) {
	for _, tc := range []struct {
		field string
		live  any
		want  model.VerdictKind
		force bool
	}{
		{"schedule", `"0 5 * * *"`, model.ApplyFails, false},
		{"schedule", `"0 5 * * *"`, model.ApplyFails, true},
		{"retention", 7, model.LeftAlone, false},
		{"retention", 9, model.Reverted, false},
		{"suspend", true, model.Reverted, false},
	} {
		// kustomize-controller owns schedule unless kubectl-edit took it.
		fluxSpec, gitSpec := `{f:schedule: {}}`, `{schedule: "0 5 * * *"}`
		if tc.field == "schedule" {
			fluxSpec, gitSpec = `{}`, `{}`
		}
		live := appliedBackup{force: tc.force, fluxSpec: fluxSpec, manager: "kubectl-edit", otherFields: `{f:spec: {f:` + tc.field + `: {}}}`,
			spec: `{schedule: "0 5 * * *", ` + tc.field + `: ` + fmt.Sprint(tc.live) + `}`}.object(t)
		desired := obj(t, `{apiVersion: diff.drift.test/v1, kind: Backup, metadata: {name: web, namespace: prod}, spec: `+gitSpec+`}`)
		a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization), obj(t, backupCRD)}})
		p := "/spec/" + tc.field
		lv, _ := jsonpointer.Get(live.Object, p)
		rep := judge(t, a, live, desired, drift(p, model.Added, lv, "kubectl-edit/Update"))
		if v := verdictAt(t, rep, p); v.Kind != tc.want || strings.Contains(v.Reason, "deleted") != tc.force {
			t.Errorf("%s %v force %v: got %s %q, want %s", tc.field, tc.live, tc.force, v.Kind, v.Reason, tc.want)
		}
		whole := false
		for _, d := range rep.Drifts {
			whole = whole || d.Path == objectPointer
		}
		if whole != tc.force {
			t.Errorf("%s force %v: the whole object listed as deleted: %v", tc.field, tc.force, whole)
		}
	}
}

// With -f, an ignore rule on a key inside an atomic value the manifest
// sets (a NetworkPolicy's podSelector, a LabelSelector): the forced dry-run
// apply replaces the value whole, so the path changes although kubectl,
// not kustomize-controller, owns it; Flux adopts the live value with a
// JSON patch replace on a manifest that lacks the key, which fails the
// apply (measured, make differential seed 20056: Ready=False "replace
// operation does not apply: doc is missing path", every field stays).
func TestFileIgnoreInsideAnAtomicValueTheManifestSets(t *testing.T) {
	ks := obj(t, `
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: repo}
  ignore:
  - paths: ["/spec/podSelector/matchLabels/app"]
    target: {kind: NetworkPolicy}
`)
	live := obj(t, `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web
  namespace: prod
  resourceVersion: "5"
  labels: {audited: "yes", kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}}, f:spec: {f:ingress: {}}}
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:audited: {}}}, f:spec: {f:podSelector: {}}}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress: [{ports: [{port: 5432, protocol: TCP}]}]
  policyTypes: [Ingress]
`)
	desired := obj(t, `{apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: web, namespace: prod}, spec: {podSelector: {matchLabels: {}}, ingress: [{ports: [{port: 5432}]}]}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks}})
	rep := judge(t, a, live, desired,
		drift("/metadata/labels/audited", model.Added, "yes", "kubectl-client-side-apply/Update"),
		drift("/spec/podSelector/matchLabels/app", model.Added, "db", "kubectl-client-side-apply/Update"))
	if v := verdictAt(t, rep, "/metadata/labels/audited"); v.Kind != model.ApplyFails || !strings.Contains(v.Reason, "doc is missing path") {
		t.Errorf("audited: got %s %q, want apply-fails (the adopt fails)", v.Kind, v.Reason)
	}
	if v := verdictAt(t, rep, "/spec/podSelector/matchLabels/app"); v.Kind == model.Reverted {
		t.Errorf("matchLabels/app: got %s %q; the apply fails, it stays", v.Kind, v.Reason)
	}
}

// With -f, Git removes the last key of an atomic value it still sets
// (podSelector: {matchLabels: {}}, emptied further by the typed
// normalization): the apply sends podSelector empty and the key goes
// (measured, make differential seed 20398: the controller emptied
// podSelector). An empty map the normalization made up where Git sets
// nothing (a Deployment's strategy) still only gets defaults below it.
func TestFileGitEmptiesAnAtomicValue(t *testing.T) {
	live := obj(t, `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web
  namespace: prod
  resourceVersion: "5"
  labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}}, f:spec: {f:podSelector: {}, f:policyTypes: {}}}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress]
`)
	desired := obj(t, `{apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: web, namespace: prod}, spec: {podSelector: {matchLabels: {}}, policyTypes: [Ingress]}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}})
	rep := judge(t, a, live, desired, drift("/spec/podSelector/matchLabels/app", model.Added, "web", "kustomize-controller/Apply"))
	if v := verdictAt(t, rep, "/spec/podSelector/matchLabels/app"); v.Kind != model.Reverted {
		t.Errorf("got %s %q, want reverted: the apply empties podSelector", v.Kind, v.Reason)
	}
}

// With -f, Git removes a custom resource's field only kustomize-controller
// applied, which its CRD's schema requires: the dry-run apply itself is
// rejected (Required value), the Kustomization turns Ready=False and
// nothing changes (make differential seed 40979, kustomize-controller
// v1.9.6: -f said reverted for schedule and for a /scale write of replicas;
// --server-dry-run's failed dry-run said apply-fails). A field the schema
// does not require is removed.
func TestFileGitDropsAFieldTheCRDRequires(t *testing.T) {
	for _, tc := range []struct {
		field string
		want  model.VerdictKind
	}{{"schedule", model.ApplyFails}, {"suspend", model.Reverted}} {
		live := appliedBackup{fluxSpec: `{f:schedule: {}, f:suspend: {}}`, spec: `{schedule: "0 5 * * *", suspend: true}`}.object(t)
		git := `{schedule: "0 5 * * *"}`
		if tc.field == "schedule" {
			git = `{suspend: true}`
		}
		desired := obj(t, `{apiVersion: diff.drift.test/v1, kind: Backup, metadata: {name: web, namespace: prod}, spec: `+git+`}`)
		a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization), obj(t, backupCRD)}})
		p := "/spec/" + tc.field
		lv, _ := jsonpointer.Get(live.Object, p)
		rep := judge(t, a, live, desired, drift(p, model.Added, lv, "kustomize-controller/Apply"))
		if v := verdictAt(t, rep, p); v.Kind != tc.want {
			t.Errorf("%s: got %s %q, want %s", tc.field, v.Kind, v.Reason, tc.want)
		}
	}
}
