package flux

import (
	"context"
	"fmt"
	"slices"
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

// kubectl wrote the API server's default into a field the manifest leaves
// out: the cleanup hands it over, the apply drops it, and the server fills
// the same value again (make differential seed 9153, an IngressClass's
// parameters.scope). A value other than the default is reverted.
func TestDefaultWrittenByKubectlStays(t *testing.T) {
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}}
	scale := fluxApplyAll + `
  - manager: kubectl-scale
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:replicas: {}}}
`
	desired := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: api, namespace: prod, labels: {app: web}, annotations: {keep: "1"}}, spec: {template: {spec: {containers: [{name: app, image: nginx:2}]}}}}`)
	a := newTestAdapter(t, reader)
	for _, tc := range []struct {
		live int64
		want model.VerdictKind
	}{{1, model.LeftAlone}, {5, model.Reverted}} {
		rep := judge(t, a, liveDeployment(t, "api", "", "", scale), desired, drift("/spec/replicas", model.Added, tc.live, "kubectl-scale/Update"))
		if v := verdictAt(t, rep, "/spec/replicas"); v.Kind != tc.want {
			t.Errorf("replicas %d set by kubectl scale, not in the manifest: %s %q, want %s", tc.live, v.Kind, v.Reason, tc.want)
		}
	}
}

// Git sets externalTrafficPolicy Local on a LoadBalancer Service whose
// live policy is Cluster: the apply reverts the policy and the API server
// allocates healthCheckNodePort in the same write (make differential seed
// 40412, kustomize-controller v1.9.6: -f named nothing there, missed).
func TestDerivedFieldTheApplyBringsIn(t *testing.T) {
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
spec:
  type: LoadBalancer
  externalTrafficPolicy: Cluster
`)
	for _, tc := range []struct {
		typ  string
		want bool
	}{{"LoadBalancer", true}, {"NodePort", false}} {
		desired := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: lb, namespace: prod}, spec: {type: `+tc.typ+`, externalTrafficPolicy: Local}}`)
		d := drift("/spec/externalTrafficPolicy", model.Changed, "Cluster")
		d.Desired = "Local"
		rep := judge(t, newTestAdapter(t, reader), live, desired, d)
		listed := false
		for _, x := range rep.Drifts {
			if x.Path == "/spec/healthCheckNodePort" {
				listed = true
				if v := verdictAt(t, rep, x.Path); v.Kind != model.Reverted || !strings.Contains(v.Reason, "allocates healthCheckNodePort") {
					t.Errorf("%s: healthCheckNodePort %s %q, want reverted (the server allocates it)", tc.typ, v.Kind, v.Reason)
				}
			}
		}
		if listed != tc.want {
			t.Errorf("%s: healthCheckNodePort listed %v, want %v", tc.typ, listed, tc.want)
		}
	}
}

// Git sets externalTrafficPolicy Local on a LoadBalancer Service under an
// ignore rule of the path: kustomize-controller's apply adopts the live
// Cluster, so the API server allocates no healthCheckNodePort, which the
// tool's dry-run of the manifest did (make differential seed 42340, class
// R14: --server-dry-run said reverted, the controller left it).
func TestDryRunDerivedFieldOfAnIgnoredSource(t *testing.T) {
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
  - paths: ["/spec/externalTrafficPolicy"]
    target: {kind: Service}
`)
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
    fieldsV1: {f:metadata: {f:labels: {f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}}, f:spec: {f:type: {}, f:externalTrafficPolicy: {}}}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Cluster
`)
	desired := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: lb, namespace: prod}, spec: {type: LoadBalancer, externalTrafficPolicy: Local}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks}})
	a.serverDryRun = true
	a.dryRunner = func(context.Context, *unstructured.Unstructured, string) (*unstructured.Unstructured, error) {
		m := live.DeepCopy()
		_ = unstructured.SetNestedField(m.Object, "Local", "spec", "externalTrafficPolicy")
		_ = unstructured.SetNestedField(m.Object, int64(31234), "spec", "healthCheckNodePort")
		return m, nil
	}
	d := drift("/spec/externalTrafficPolicy", model.Changed, "Cluster", "kustomize-controller/Apply")
	d.Desired = "Local"
	rep := judge(t, a, live, desired, d)
	if v := verdictAt(t, rep, "/spec/externalTrafficPolicy"); v.Kind != model.Ignored {
		t.Fatalf("externalTrafficPolicy: %s %q, want ignored", v.Kind, v.Reason)
	}
	for _, x := range rep.Drifts {
		if x.Path == "/spec/healthCheckNodePort" {
			t.Errorf("healthCheckNodePort listed %+v: the apply adopts the live policy, the server allocates nothing", x.Verdicts)
		}
	}
}

// The 1.37 API server defaults a StatefulSet's rollingUpdate.maxUnavailable
// (MaxUnavailableStatefulSet): a manifest that now sets updateStrategy.type
// drops the empty updateStrategy under which kustomize-controller owned the
// defaults, and the server fills the same 1 again (make differential seed
// 42210, class R8: -f said reverted, the controller left it).
func TestStatefulSetMaxUnavailableDefaultStays(t *testing.T) {
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}}
	live := obj(t, `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: prod
  labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:updateStrategy: {f:type: {}, f:rollingUpdate: {f:partition: {}, f:maxUnavailable: {}}}}}
spec:
  serviceName: db
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0, maxUnavailable: 1}}
`)
	desired := obj(t, `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, namespace: prod}, spec: {serviceName: db, updateStrategy: {type: RollingUpdate}}}`)
	const p = "/spec/updateStrategy/rollingUpdate/maxUnavailable"
	rep := judge(t, newTestAdapter(t, reader), live, desired, drift(p, model.Added, int64(1), "kustomize-controller/Apply"))
	for _, d := range rep.Drifts {
		// Left alone and written by no one but the apply: not drift
		// (judgment.unwritten), so not listed.
		if d.Path == p {
			t.Errorf("maxUnavailable 1 listed %+v: the server's default again, nothing changes", d.Verdicts)
		}
	}
	two := live.DeepCopy()
	_ = unstructured.SetNestedField(two.Object, int64(2), "spec", "updateStrategy", "rollingUpdate", "maxUnavailable")
	rep = judge(t, newTestAdapter(t, reader), two, desired, drift(p, model.Added, int64(2), "kustomize-controller/Apply"))
	if v := verdictAt(t, rep, p); v.Kind != model.Reverted {
		t.Errorf("maxUnavailable 2: %s %q, want reverted (not the default)", v.Kind, v.Reason)
	}
}

// kubectl patch set sessionAffinity ClientIP and the API server filled
// sessionAffinityConfig.clientIP.timeoutSeconds 10800 in the same write
// (kubectl-patch owns both); another manager's server-side apply then
// applied the same ClientIP. The cleanup hands kubectl-patch's fields to
// kustomize-controller and its apply drops them, but argocd-controller
// still owns sessionAffinity ClientIP, so the API server's defaulting
// (kubernetes pkg/apis/core/v1/defaults.go SetDefaults_Service) fills the
// same 10800 again: left alone (make differential seed 42657, class R15:
// -f said reverted). Without the other manager, or with Git setting None,
// the source goes and the derived field with it: reverted.
func TestDerivedFieldOfAKeptSourceStays(t *testing.T) {
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}}
	service := func(others string) *unstructured.Unstructured {
		return obj(t, `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: prod
  labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:type: {}, f:ports: {"k:{\"port\":80,\"protocol\":\"TCP\"}": {.: {}, f:port: {}, f:protocol: {}}}}}
  - manager: kubectl-patch
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:sessionAffinity: {}, f:sessionAffinityConfig: {.: {}, f:clientIP: {.: {}, f:timeoutSeconds: {}}}}}
`+others+`
spec:
  type: ClusterIP
  ports: [{port: 80, protocol: TCP}]
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 10800}}
`)
	}
	const argo = `
  - manager: argocd-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:sessionAffinity: {}}}
`
	const timeout = "/spec/sessionAffinityConfig/clientIP/timeoutSeconds"
	for _, tc := range []struct {
		name, others, git string
		managers          []string
		want              model.VerdictKind
	}{
		{"kept by argocd-controller", argo, "", []string{"kubectl-patch/Update", "argocd-controller/Apply"}, model.LeftAlone},
		{"kubectl-patch only", "", "", []string{"kubectl-patch/Update"}, model.Reverted},
		{"Git sets None", argo, ", sessionAffinity: None", []string{"kubectl-patch/Update", "argocd-controller/Apply"}, model.Reverted},
	} {
		desired := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: web, namespace: prod}, spec: {type: ClusterIP, ports: [{port: 80}]`+tc.git+`}}`)
		source := drift("/spec/sessionAffinity", model.Added, "ClientIP", tc.managers...)
		if tc.git != "" {
			source.Change, source.Desired = model.Changed, "None"
		}
		rep := judge(t, newTestAdapter(t, reader), service(tc.others), desired, source,
			drift(timeout, model.Added, int64(10800), "kubectl-patch/Update"))
		got := model.VerdictKind("")
		for _, d := range rep.Drifts {
			if d.Path == timeout {
				got = verdictAt(t, rep, timeout).Kind
			}
		}
		// Left alone by the apply: not listed (only the engine and the
		// API server wrote it now), or listed left alone.
		if got == "" {
			got = model.LeftAlone
		}
		if got != tc.want {
			t.Errorf("%s: timeoutSeconds %s, want %s", tc.name, got, tc.want)
		}
	}

	// Inferred mode (the saved case of seed 42657, Git unchanged): the
	// value comes back unless the manifest sets sessionAffinity, which
	// ownership cannot tell (kubectl patch took it from
	// kustomize-controller if Git set None): unknown, not reverted. With
	// kubectl-patch alone the source goes with the cleanup: reverted.
	for _, tc := range []struct {
		name, others string
		want         model.VerdictKind
	}{{"inferred, kept by argocd-controller", argo, model.Unknown}, {"inferred, kubectl-patch only", "", model.Reverted}} {
		rep := judge(t, newTestAdapter(t, reader), service(tc.others), nil, drift(timeout, model.Changed, int64(10800), "kubectl-patch/Update"))
		if v := verdictAt(t, rep, timeout); v.Kind != tc.want {
			t.Errorf("%s: timeoutSeconds %s %q, want %s", tc.name, v.Kind, v.Reason, tc.want)
		}
	}
}

// appsKustomization is the Kustomization apps; %s is its .spec tail.
const appsKustomization = `
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: repo}
%s`

// ignoreSessionAffinity is an ignore rule of Services' sessionAffinity.
const ignoreSessionAffinity = "  ignore:\n  - paths: [\"/spec/sessionAffinity\"]\n    target: {kind: Service}\n"

// Git sets sessionAffinity None under an ignore rule of the path; another
// manager's server-side apply forced ClientIP and the API server filled
// sessionAffinityConfig. The tool's dry-run sends Git's None and the
// server drops the config in its answer, but kustomize-controller keeps
// the live ClientIP for the ignored path, so the config stays (make
// differential seed 44284, class R15 under R14's rule: --server-dry-run
// said reverted, the controller left it).
func TestDryRunDerivedFieldOfAnIgnoredSourceStays(t *testing.T) {
	ks := obj(t, fmt.Sprintf(appsKustomization, ignoreSessionAffinity))
	live := obj(t, `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: prod
  labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}}, f:spec: {f:type: {}}}
  - manager: platform-operator
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:sessionAffinity: {}}}
spec:
  type: ClusterIP
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 10800}}
`)
	desired := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: web, namespace: prod}, spec: {type: ClusterIP, sessionAffinity: None}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks}})
	a.serverDryRun = true
	a.dryRunner = func(context.Context, *unstructured.Unstructured, string) (*unstructured.Unstructured, error) {
		m := live.DeepCopy()
		_ = unstructured.SetNestedField(m.Object, "None", "spec", "sessionAffinity")
		unstructured.RemoveNestedField(m.Object, "spec", "sessionAffinityConfig")
		return m, nil
	}
	const timeout = "/spec/sessionAffinityConfig/clientIP/timeoutSeconds"
	source := drift("/spec/sessionAffinity", model.Changed, "ClientIP", "platform-operator/Apply")
	source.Desired = "None"
	// Listed by the comparison with Git (no sessionAffinityConfig there),
	// or only by the dry-run's changes (addDryRunChanges: as the
	// comparison of seed 44284 left it out).
	for _, drifts := range [][]model.FieldDrift{{source, drift(timeout, model.Added, int64(10800))}, {source}} {
		rep := judge(t, a, live, desired, drifts...)
		if v := verdictAt(t, rep, "/spec/sessionAffinity"); v.Kind != model.Ignored {
			t.Fatalf("sessionAffinity: %s %q, want ignored", v.Kind, v.Reason)
		}
		for _, x := range rep.Drifts {
			if x.Path == timeout {
				if v := verdictAt(t, rep, timeout); v.Kind == model.Reverted {
					t.Errorf("%d drifts in: timeoutSeconds %s %q: the rule keeps ClientIP, the server keeps the config", len(drifts), v.Kind, v.Reason)
				}
			}
		}
	}
}

// TestFileDerivedFieldOfAnIgnoredSourceStays, with -f: Git adds
// sessionAffinity ClientIP under an ignore rule of the path, whose live
// value is None. kustomize-controller adopts the live None into its
// apply, so the API server fills no sessionAffinityConfig; the manifest
// as the tool defaults it has one. Not reverted (make differential seed
// 68552: -f said reverted, the controller wrote none). Without the rule
// the apply sets ClientIP and the config comes with it.
func TestFileDerivedFieldOfAnIgnoredSourceStays(t *testing.T) {
	live := obj(t, `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: prod
  labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}}, f:spec: {f:type: {}, f:sessionAffinity: {}}}
spec:
  type: ClusterIP
  sessionAffinity: None
`)
	desired := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: web, namespace: prod}, spec: {type: ClusterIP, sessionAffinity: ClientIP, sessionAffinityConfig: {clientIP: {timeoutSeconds: 10800}}}}`)
	const config = "/spec/sessionAffinityConfig"
	for _, c := range []struct {
		ignore string
		want   model.VerdictKind
	}{
		// Not listed, or listed as not reverted.
		{ignoreSessionAffinity, model.LeftAlone},
		{"", model.Reverted},
	} {
		a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, fmt.Sprintf(appsKustomization, c.ignore))}})
		source := drift("/spec/sessionAffinity", model.Changed, "None", "kustomize-controller/Apply")
		source.Desired = "ClientIP"
		cfg := drift(config, model.Removed, nil)
		cfg.Desired = map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(10800)}}
		rep := judge(t, a, live, desired, source, cfg)
		listed := slices.ContainsFunc(rep.Drifts, func(d model.FieldDrift) bool { return d.Path == config })
		switch {
		case c.want == model.Reverted && !listed:
			t.Errorf("no rule: sessionAffinityConfig not listed, want reverted")
		case listed:
			if v := verdictAt(t, rep, config); v.Kind != c.want {
				t.Errorf("ignore %q: sessionAffinityConfig %s %q, want %s", c.ignore, v.Kind, v.Reason, c.want)
			}
		}
	}
}
