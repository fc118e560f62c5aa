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
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// sidecarLive is the measured state of e2e webhook-sidecar-edited: a
// webhook injected the sidecar (its fields owned by nobody), then
// `kubectl edit` changed its image. ownerOfImage owns the image.
func sidecarLive(t *testing.T, ownerOfImage string) *unstructured.Unstructured {
	managed := kustomizeApply(`      f:metadata:
        f:labels: {f:app: {}, f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}
      f:spec:
        f:replicas: {}
        f:template: {f:spec: {f:containers: {'k:{"name":"app"}': {.: {}, f:name: {}, f:image: {}}}}}
`)
	if ownerOfImage == KustomizeManager {
		managed = strings.Replace(managed, `f:image: {}}}}}`, `f:image: {}}, 'k:{"name":"sidecar"}': {f:image: {}}}}}`, 1)
	} else {
		managed += `
  - manager: ` + ownerOfImage + `
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec: {f:template: {f:spec: {f:containers: {'k:{"name":"sidecar"}': {f:image: {}}}}}}
`
	}
	return obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
  resourceVersion: "42"
  labels: {app: web, kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:`+managed+`
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: app, image: "nginx:1.25"}
      - {name: sidecar, image: "busybox:1.37", imagePullPolicy: IfNotPresent}
`)
}

const sidecarGit = `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: prod, labels: {app: web}}, spec: {replicas: 2, template: {spec: {containers: [{name: app, image: "nginx:1.25"}]}}}}`

func TestApplyFailsWhenTheCleanupStripsARequiredField(t *testing.T) {
	ks := obj(t, kustomization)
	for _, tc := range []struct {
		name    string
		owner   string
		desired bool
		path    string
		want    model.VerdictKind
		has     string
	}{
		// -f: the diff names the whole injected item.
		{name: "file", owner: "kubectl-edit", desired: true, path: "/spec/template/spec/containers/1",
			want: model.ApplyFails, has: `required "image"`},
		{name: "inferred", owner: "kubectl-edit", path: "/spec/template/spec/containers/1/image",
			want: model.ApplyFails, has: "managedFields cleanup hands .spec.template.spec.containers[name=sidecar].image"},
		// After a failed apply kustomize-controller owns the image.
		{name: "file, after the failed apply", owner: KustomizeManager, desired: true, path: "/spec/template/spec/containers/1",
			want: model.ApplyFails, has: "Ready=False"},
		// A manager the cleanup does not touch: its field stays.
		{name: "operator", owner: "my-operator", desired: true, path: "/spec/template/spec/containers/1",
			want: model.LeftAlone, has: "my-operator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := sidecarLive(t, tc.owner)
			var desired *unstructured.Unstructured
			if tc.desired {
				desired = obj(t, sidecarGit)
			}
			a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks}})
			rep := judge(t, a, live, desired, drift(tc.path, model.Added, "x", tc.owner+"/Update"))
			v := verdictAt(t, rep, tc.path)
			if v.Kind != tc.want || !strings.Contains(v.Reason, tc.has) {
				t.Fatalf("got %s %q, want %s containing %q", v.Kind, v.Reason, tc.want, tc.has)
			}
			if tc.want == model.ApplyFails && rep.ExitCode() != 1 {
				t.Errorf("exit code %d, want 1: the engine acts", rep.ExitCode())
			}
		})
	}
}

// A dry-run apply that the API server rejects is the controller's own
// failure: every field the apply would change stays.
func TestApplyFailsWhenTheDryRunIsInvalid(t *testing.T) {
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}})
	a.serverDryRun = true
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
		field.ErrorList{field.Required(field.NewPath("spec", "template", "spec", "containers").Index(1).Child("image"), "")})
	a.dryRunner = func(context.Context, *unstructured.Unstructured, string) (*unstructured.Unstructured, error) {
		return nil, invalid
	}
	live := sidecarLive(t, KustomizeManager)
	rep := judge(t, a, live, obj(t, sidecarGit),
		drift("/spec/template/spec/containers/1", model.Added, "x", "kustomize-controller/Apply"),
		drift("/spec/replicas", model.Changed, 5, "kubectl-edit/Update"))
	for _, p := range []string{"/spec/template/spec/containers/1", "/spec/replicas"} {
		v := verdictAt(t, rep, p)
		if v.Kind != model.ApplyFails || !strings.Contains(v.Reason, "containers[1].image: Required value") {
			t.Errorf("%s: got %s %q, want apply-fails naming the API server's error", p, v.Kind, v.Reason)
		}
	}
}

// With -f, a value only kustomize-controller's own apply wrote that differs
// from the manifest is unknown (a changed manifest, or a webhook that
// rewrites it on every apply: measured, it stays) when a mutating webhook
// may intercept the object's updates; a value another manager wrote is
// reverted.
func TestOnlyFluxWroteADifferentValueIsUnknownWithFile(t *testing.T) {
	webhook := obj(t, `{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingWebhookConfiguration, metadata: {name: inject}, webhooks: [{name: inject.example.com, rules: [{apiGroups: [apps], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [deployments]}]}]}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization), webhook}})
	live := sidecarLive(t, "kubectl-edit")
	desired := obj(t, strings.Replace(sidecarGit, `"nginx:1.25"`, `"nginx:1.26"`, 1))
	rep := judge(t, a, live, desired,
		drift("/spec/template/spec/containers/0/image", model.Changed, "nginx:1.25", "kustomize-controller/Apply"),
		drift("/spec/replicas", model.Changed, 2, "kubectl-scale/Update"))
	if v := verdictAt(t, rep, "/spec/template/spec/containers/0/image"); v.Kind != model.Unknown || !strings.Contains(v.Reason, "--server-dry-run") {
		t.Errorf("image: got %s %q, want unknown naming --server-dry-run", v.Kind, v.Reason)
	}
	if v := verdictAt(t, rep, "/spec/replicas"); v.Kind == model.Unknown {
		t.Errorf("replicas (kubectl-scale's value): got %s %q, want a decided verdict", v.Kind, v.Reason)
	}
}

// Without a mutating webhook that may intercept the object (none, or only
// ones on other resources or operations), the value only
// kustomize-controller's apply wrote comes from an older manifest: the
// next apply writes Git's (make differential seed 40131: a label Git
// changed, -f said unknown, kustomize-controller v1.9.6 changed it).
func TestOnlyFluxWroteADifferentValueWithoutWebhooksIsReverted(t *testing.T) {
	podsOnly := obj(t, `{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingWebhookConfiguration, metadata: {name: pods}, webhooks: [{name: pods.example.com, rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}]}]}`)
	createOnly := obj(t, `{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingWebhookConfiguration, metadata: {name: create}, webhooks: [{name: create.example.com, rules: [{apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: ["*"]}]}]}`)
	anyUpdate := obj(t, `{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingWebhookConfiguration, metadata: {name: any}, webhooks: [{name: any.example.com, rules: [{apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*/*"]}]}]}`)
	live := liveDeployment(t, "api", "    tier: backend", "", kustomizeApply(`      f:metadata:
        f:labels: {f:app: {}, f:tier: {}, f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}
`))
	desired := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: api, namespace: prod, labels: {app: web, tier: gold}}, spec: {replicas: 5, template: {spec: {containers: [{name: app, image: nginx:2}]}}}}`)
	for _, tc := range []struct {
		name     string
		webhooks []*unstructured.Unstructured
		want     model.VerdictKind
	}{
		{"none", nil, model.Reverted},
		{"other resources and operations", []*unstructured.Unstructured{podsOnly, createOnly}, model.Reverted},
		{"one may intercept", []*unstructured.Unstructured{podsOnly, anyUpdate}, model.Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestAdapter(t, &testutil.Reader{Objects: append([]*unstructured.Unstructured{obj(t, kustomization)}, tc.webhooks...)})
			d := drift("/metadata/labels/tier", model.Changed, "backend", "kustomize-controller/Apply")
			d.Desired = "gold"
			rep := judge(t, a, live, desired, d)
			if v := verdictAt(t, rep, "/metadata/labels/tier"); v.Kind != tc.want {
				t.Errorf("tier: got %s %q, want %s", v.Kind, v.Reason, tc.want)
			}
		})
	}
}

// A scan judges many objects with one adapter: the webhook configurations
// are listed once, not once per object ("One LIST per kind").
func TestWebhooksListedOncePerAdapter(t *testing.T) {
	r := &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}}
	a := newTestAdapter(t, r)
	live := liveDeployment(t, "api", "    tier: backend", "", kustomizeApply(`      f:metadata:
        f:labels: {f:app: {}, f:tier: {}, f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}
`))
	desired := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: api, namespace: prod, labels: {app: web, tier: gold}}, spec: {replicas: 5, template: {spec: {containers: [{name: app, image: nginx:2}]}}}}`)
	var lists []int
	for range 3 {
		d := drift("/metadata/labels/tier", model.Changed, "backend", "kustomize-controller/Apply")
		d.Desired = "gold"
		rep := judge(t, a, live, desired, d)
		if v := verdictAt(t, rep, "/metadata/labels/tier"); v.Kind != model.Reverted {
			t.Fatalf("tier: got %s %q, want reverted", v.Kind, v.Reason)
		}
		lists = append(lists, len(r.Lists))
	}
	if lists[0] == 0 || lists[1] != lists[0] || lists[2] != lists[0] {
		t.Errorf("LISTs after each of three judgments: %v, want the first judgment's only", lists)
	}
}
