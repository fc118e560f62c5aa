package flux

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// An injected sidecar ahead of the manifest's container: live index 1 is
// the manifest's index 0, paired by the containers' merge key (name).
func TestLookupKeyedPairsByMergeKey(t *testing.T) {
	// web is the Deployment with the given container list, live or desired.
	web := func(containers string) *unstructured.Unstructured {
		return obj(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
`+containers)
	}
	live := web(`      - {name: sidecar, image: proxy:1}
      - name: app
        image: nginx:1.26
        ports: [{containerPort: 80, protocol: TCP}]
`)
	desired := web(`      - name: app
        image: nginx:1.25
        ports: [{containerPort: 80}]
`)
	cases := []struct {
		ptr    string
		want   any
		wantOK bool
	}{
		{"/spec/template/spec/containers/1/image", "nginx:1.25", true},
		// The port's protocol key defaults to TCP, as the API server fills it.
		{"/spec/template/spec/containers/1/ports/0/containerPort", int64(80), true}, // as decoded from a file or the API server
		// The sidecar is not in the manifest at all.
		{"/spec/template/spec/containers/0/image", nil, false},
	}
	// Without a memo and through one memo shared by every lookup (the
	// judgment's): the same answers.
	memo := &itemMemo{}
	for _, m := range []*itemMemo{nil, memo, memo} {
		for _, c := range cases {
			got, ok := lookupKeyed(nil, live, desired.Object, c.ptr, m)
			if ok != c.wantOK || (ok && got != c.want) {
				t.Errorf("lookupKeyed(%s, memo %v) = %v, %v; want %v, %v", c.ptr, m != nil, got, ok, c.want, c.wantOK)
			}
		}
	}
	if len(memo.lists) == 0 {
		t.Error("the memo indexed no list")
	}
	// By index, the old behaviour, the sidecar's image would have been
	// compared with the manifest's app container.
	if got, _ := jsonpointer.Get(desired.Object, "/spec/template/spec/containers/0/image"); got != "nginx:1.25" {
		t.Fatalf("plain lookup = %v", got)
	}
}

// A release Secret built the way Helm's Secret driver stores it: the
// manifest becomes the desired state of inferred-mode verdicts, and the
// values never reach the report.
func TestReleaseManifestAsDesired(t *testing.T) {
	rel := map[string]any{
		"name":     "web",
		"manifest": "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2}\n",
		"config":   map[string]any{"password": "hunter2"},
	}
	secret := releaseSecret(t, "apps", "3", rel)
	hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: apps}, spec: {interval: 1h, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: r}}}}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{secret, hr}})
	st, err := ownerFrom(doc{obj: hr})
	if err != nil {
		t.Fatal(err)
	}
	live := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: apps}, spec: {replicas: 5}}`)
	got, note := a.releaseManifest(context.Background(), st, live)
	if got == nil {
		t.Fatalf("no manifest; note %+v", note)
	}
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 2 {
		t.Errorf("replicas = %d, want 2 (from the release)", r)
	}
	if note == nil || !strings.Contains(note.Message, "v3") || strings.Contains(note.Message, "hunter2") {
		t.Errorf("note %+v", note)
	}
}

// Measured on kustomize-controller v1.9.6 (e2e TestFluxConformance): Flux
// applies `strategy: {}` (its typed normalization of a manifest without
// one), the API server defaults below it and records those defaults as
// kustomize-controller's, yet no apply ever changes them. Same for a
// container port's defaulted protocol key. A label Flux owns and Git no
// longer sets is still removed.
func TestServerDefaultsBelowFluxFieldsAreLeftAlone(t *testing.T) {
	live := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
  labels: {app: web, gone: "1", kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}
  managedFields:`+kustomizeApply(`      f:metadata:
        f:labels: {f:app: {}, f:gone: {}, f:kustomize.toolkit.fluxcd.io/name: {}, f:kustomize.toolkit.fluxcd.io/namespace: {}}
      f:spec:
        f:strategy: {f:type: {}, f:rollingUpdate: {.: {}, f:maxSurge: {}, f:maxUnavailable: {}}}
        f:template: {f:spec: {f:containers: {'k:{"name":"app"}': {.: {}, f:name: {}, f:image: {}, f:ports: {'k:{"containerPort":80,"protocol":"TCP"}': {.: {}, f:containerPort: {}, f:protocol: {}}}}}}}
`)+`spec:
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}
  template:
    spec:
      containers:
      - name: app
        image: nginx:1
        ports: [{containerPort: 80, protocol: TCP}]
`)
	desired := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod, labels: {app: web}}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx:1
        ports: [{containerPort: 80}]
`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{obj(t, kustomization)}})
	rep := judge(t, a, live, desired,
		drift("/spec/strategy/type", model.Added, "RollingUpdate", "kustomize-controller/Apply"),
		drift("/spec/strategy/rollingUpdate/maxSurge", model.Added, "25%", "kustomize-controller/Apply"),
		drift("/spec/template/spec/containers/0/ports/0/protocol", model.Added, "TCP", "kustomize-controller/Apply"),
		drift("/metadata/labels/gone", model.Added, "1", "kustomize-controller/Apply"))
	for _, p := range []string{"/spec/strategy/type", "/spec/strategy/rollingUpdate/maxSurge", "/spec/template/spec/containers/0/ports/0/protocol"} {
		notListed(t, rep, p) // an API-server default the next apply gets again
	}
	if v := verdictAt(t, rep, "/metadata/labels/gone"); v.Kind != model.Reverted {
		t.Errorf("a label removed from Git: %s %q, want reverted", v.Kind, v.Reason)
	}
}

// helmReleaseSecret is release v1 of HelmRelease apps/web as Helm's
// Secret driver stores it, holding manifest.
func helmReleaseSecret(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	js, _ := json.Marshal(map[string]any{"name": "web", "manifest": manifest})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(js)
	_ = zw.Close()
	helmB64 := base64.StdEncoding.EncodeToString(gz.Bytes())
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "sh.helm.release.v1.web.v1", "namespace": "apps",
			"labels": map[string]any{"owner": "helm", "name": "web", "status": "deployed", "version": "1"}},
		"data": map[string]any{"release": base64.StdEncoding.EncodeToString([]byte(helmB64))},
	}}
}

// Inferred mode on a HelmRelease with drift detection enabled judges
// against the release manifest: helm-controller puts back what the chart
// sets and removes nothing it never set, so `kubectl rollout restart`'s
// annotation and an env var another manager applied stay (issue 31,
// measured on helm-controller v1.6.0), while a chart field changed live
// is reverted.
func TestHelmInferredKeepsWhatTheChartNeverSet(t *testing.T) {
	secret := helmReleaseSecret(t, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx:1\n        env: [{name: A, value: a}]\n")
	hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: apps}, spec: {interval: 1h, driftDetection: {mode: enabled}, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: r}}}}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{secret, hr}})
	live := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps, labels: {helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: apps}}
spec:
  replicas: 5
  template:
    metadata: {annotations: {kubectl.kubernetes.io/restartedAt: "2026-12-05T10:00:00Z"}}
    spec:
      containers:
      - name: app
        image: nginx:1
        env: [{name: A, value: a}, {name: B, value: b}]
`)
	restarted := "/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"
	rep := judge(t, a, live, nil,
		drift("/spec/replicas", model.Changed, 5, "kubectl-scale/Update"),
		drift(restarted, model.Changed, "2026-12-05T10:00:00Z", "kubectl-rollout/Update"),
		drift("/spec/template/spec/containers/0/env/1", model.Changed, map[string]any{"name": "B", "value": "b"}, "other/Apply"))
	if v := verdictAt(t, rep, "/spec/replicas"); v.Kind != model.Reverted {
		t.Errorf("a chart field changed live: %s %q, want reverted", v.Kind, v.Reason)
	}
	for _, p := range []string{restarted, "/spec/template/spec/containers/0/env/1"} {
		if v := verdictAt(t, rep, p); v.Kind != model.LeftAlone {
			t.Errorf("%s, which the chart never set: %s %q, want left-alone", p, v.Kind, v.Reason)
		}
	}
}

// TestHelmInferredValueEqualToTheReleaseIsNotDrift (make differential
// ENGINE=flux-helm seed 9024, class H3): a client-side apply wrote a
// chart field back with the chart's own value; managedFields name kubectl
// as its owner, but helm-controller's dry-run changes nothing there
// (Drifted=False in warn mode). Reported was wrong; it is not drift.
func TestHelmInferredValueEqualToTheReleaseIsNotDrift(t *testing.T) {
	secret := helmReleaseSecret(t, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\nspec:\n  replicas: 1\n  paused: false\n")
	for _, mode := range []string{"warn", "enabled"} {
		hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: apps}, spec: {interval: 1h, driftDetection: {mode: `+mode+`}, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: r}}}}}`)
		a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{secret, hr}})
		live := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: apps, labels: {helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: apps}}, spec: {replicas: 1, paused: true}}`)
		rep := judge(t, a, live, nil,
			drift("/spec/replicas", model.Changed, int64(1), "kubectl-client-side-apply/Update"),
			drift("/spec/paused", model.Changed, true, "kubectl-edit/Update"))
		// Not listed at all since class H9 (as -f, whose comparison with
		// the release manifest finds nothing there).
		notListed(t, rep, "/spec/replicas")
		if v := verdictAt(t, rep, "/spec/paused"); v.Kind == model.LeftAlone {
			t.Errorf("mode %s: a chart field changed live: %s %q", mode, v.Kind, v.Reason)
		}
	}
}

// TestHelmInferredIgnoredKeyOfAnAtomicValue (make differential
// ENGINE=flux-helm seed 20063, class H6): managedFields name a Service's
// atomic selector whole after kubectl changed its `app` key, which the
// HelmRelease's driftDetection.ignore covers. helm-controller removes the
// ignored pointer from the dry-run result and the live object before
// comparing (fluxcd/pkg ssa jsondiff Unstructured) and finds nothing else
// there: it left the selector. Reverted was wrong; a second key changed
// live is drift again.
func TestHelmInferredIgnoredKeyOfAnAtomicValue(t *testing.T) {
	secret := helmReleaseSecret(t, "---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: apps}\nspec:\n  clusterIP: None\n  selector: {app: web, tier: be}\n  ports: [{port: 80}]\n")
	hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: apps}, spec: {interval: 1h, driftDetection: {mode: enabled, ignore: [{paths: [/spec/selector/app], target: {kind: Service}}]}, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: r}}}}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{secret, hr}})
	for _, tc := range []struct {
		tier string
		want model.VerdictKind
	}{{"be", model.Ignored}, {"fe", model.Reverted}} {
		live := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: web, namespace: apps, labels: {helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: apps}}, spec: {clusterIP: None, selector: {app: other, tier: `+tc.tier+`}, ports: [{port: 80}]}}`)
		rep := judge(t, a, live, nil,
			drift("/spec/selector", model.Changed, map[string]any{"app": "other", "tier": tc.tier}, "kubectl-client-side-apply/Update"))
		if v := verdictAt(t, rep, "/spec/selector"); v.Kind != tc.want {
			t.Errorf("selector {app: other (ignored), tier: %s}: %s %q, want %s", tc.tier, v.Kind, v.Reason, tc.want)
		}
	}
}

// TestHelmInferredFieldAnotherEngineWrote (make differential
// ENGINE=flux-helm seed 9046): a server-side apply as argocd-controller
// forced a PodDisruptionBudget's maxUnavailable away from the chart's
// value. Inference lists no field a GitOps manager owns, so inferred mode
// named nothing; helm-controller diffs the release manifest with the live
// object whoever wrote it and, with drift detection enabled, put it back.
func TestHelmInferredFieldAnotherEngineWrote(t *testing.T) {
	secret := helmReleaseSecret(t, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: apps}\nspec:\n  maxUnavailable: 25%\n  selector: {matchLabels: {app: web}}\n")
	hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: apps}, spec: {interval: 1h, driftDetection: {mode: enabled}, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: r}}}}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{secret, hr}})
	live := obj(t, `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: apps
  labels: {helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: apps}
  managedFields:
  - manager: helm-controller
    operation: Apply
    apiVersion: policy/v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:helm.toolkit.fluxcd.io/name: {}, f:helm.toolkit.fluxcd.io/namespace: {}}}, f:spec: {f:selector: {}}}
  - manager: argocd-controller
    operation: Apply
    apiVersion: policy/v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:maxUnavailable: {}}}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
`)
	rep := judge(t, a, live, nil)
	if v := verdictAt(t, rep, "/spec/maxUnavailable"); v.Kind != model.Reverted {
		t.Errorf("maxUnavailable another engine applied: %s %q, want reverted", v.Kind, v.Reason)
	}
	notListed(t, rep, "/spec/selector")
}

// TestHelmSecretDataCorrectionFails (make differential ENGINE=flux-helm
// seeds 60287, 60311, 60389, class H7): a Secret's data key the chart sets
// changed live, drift detection enabled. helm-controller v1.6.0 masks the
// Secret's patch in place before applying it, the API server rejects the
// masked value, and nothing changes: reported, not reverted, for the data
// key and for a chart label in the same patch; with the key ignored the
// label is corrected.
func TestHelmSecretDataCorrectionFails(t *testing.T) {
	secret := helmReleaseSecret(t, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: web, namespace: apps, labels: {tier: be}}\ntype: Opaque\ndata: {token: Z2l0}\n")
	live := obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: web, namespace: apps, labels: {tier: fe, helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: apps}}, type: Opaque, data: {token: bGl2ZQ==}}`)
	for _, tc := range []struct {
		ignore      string
		token, tier model.VerdictKind
	}{{"", model.Reported, model.Reported}, {"/data/token", model.Ignored, model.Reverted}} {
		dd := `{mode: enabled}`
		if tc.ignore != "" {
			dd = `{mode: enabled, ignore: [{paths: [` + tc.ignore + `]}]}`
		}
		hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: apps}, spec: {interval: 1h, driftDetection: `+dd+`, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: r}}}}}`)
		a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{secret, hr}})
		rep := judge(t, a, live, nil,
			drift("/data/token", model.Changed, "bGl2ZQ==", "kubectl-edit/Update"),
			drift("/metadata/labels/tier", model.Changed, "fe", "kubectl-label/Update"))
		if v := verdictAt(t, rep, "/data/token"); v.Kind != tc.token {
			t.Errorf("ignore %q: /data/token %s %q, want %s", tc.ignore, v.Kind, v.Reason, tc.token)
		}
		if v := verdictAt(t, rep, "/metadata/labels/tier"); v.Kind != tc.tier {
			t.Errorf("ignore %q: the chart's label in the same patch: %s %q, want %s", tc.ignore, v.Kind, v.Reason, tc.tier)
		}
	}
}

// TestHelmItemOfAnAtomicListTheReleaseSets (make differential
// ENGINE=flux-helm seed 60328, class H8): the release sets an aggregated
// ClusterRole's rules to [] and another manager filled the (atomic) list.
// helm-controller's dry-run apply replaces the list whole and ApplyDiff
// puts [] back; with the release manifest as -f the tool said left-alone
// (the item is not in the manifest).
func TestHelmItemOfAnAtomicListTheReleaseSets(t *testing.T) {
	hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: apps}, spec: {interval: 1h, driftDetection: {mode: enabled}, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: r}}}}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{hr}})
	desired := obj(t, `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: web}, aggregationRule: {clusterRoleSelectors: [{matchLabels: {agg: "true"}}]}, rules: []}`)
	live := obj(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: web
  labels: {helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: apps}
  managedFields:
  - manager: helm-controller
    operation: Apply
    apiVersion: rbac.authorization.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:aggregationRule: {f:clusterRoleSelectors: {}}}
  - manager: clusterrole-aggregation-controller
    operation: Apply
    apiVersion: rbac.authorization.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:rules: {}}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {agg: "true"}}]}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`)
	rep := judge(t, a, live, desired,
		drift("/rules/0", model.Added, map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"}}, "clusterrole-aggregation-controller/Apply"))
	if v := verdictAt(t, rep, "/rules/0"); v.Kind != model.Reverted {
		t.Errorf("an item of the atomic rules the release sets to []: %s %q, want reverted", v.Kind, v.Reason)
	}
}

// TestHelmInferredEmptyListTheServerStoresAsNull (make differential
// ENGINE=flux-helm seeds 60374, 60451, class H9): a client-side apply of
// the chart sends an aggregated ClusterRole's `rules: []`, which the API
// server stores as null, as it did for helm-controller's own apply; kubectl
// now owns rules and inference listed it: not-watched (noise) or reverted
// (wrong: the controller left it, its dry-run finds nothing). Not drift.
func TestHelmInferredEmptyListTheServerStoresAsNull(t *testing.T) {
	secret := helmReleaseSecret(t, "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: web}\naggregationRule: {clusterRoleSelectors: [{matchLabels: {agg: \"true\"}}]}\nrules: []\n")
	for _, mode := range []string{"", "enabled"} {
		hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: apps}, spec: {interval: 1h, driftDetection: {mode: "`+mode+`"}, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: r}}}}}`)
		a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{secret, hr}})
		live := obj(t, `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: web, labels: {helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: apps}}, aggregationRule: {clusterRoleSelectors: [{matchLabels: {agg: "true"}}]}, rules: null}`)
		rep := judge(t, a, live, nil, drift("/rules", model.Changed, nil, "kubectl-client-side-apply/Update"))
		notListed(t, rep, "/rules")
	}
}

// TestHelmDefaultInsideAnAtomicListHelmWrote (make differential
// ENGINE=flux-helm seeds 60658, 60666, 60746, 60765): with the release
// manifest, a volumeClaimTemplate's apiVersion, kind and volumeMode are
// server defaults inside the atomic list helm-controller applied; its
// dry-run gets them again. H8's rule (the release replaces an atomic value
// whole) holds only for a value another manager wrote: these stay out.
func TestHelmDefaultInsideAnAtomicListHelmWrote(t *testing.T) {
	hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: apps}, spec: {interval: 1h, driftDetection: {mode: enabled}, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: r}}}}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{hr}})
	desired := obj(t, `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: web, namespace: apps}, spec: {serviceName: web, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: nginx}]}}, volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]}}`)
	live := obj(t, `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: apps
  labels: {helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: apps}
  managedFields:
  - manager: helm-controller
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:serviceName: {}, f:selector: {}, f:volumeClaimTemplates: {}}}
spec:
  serviceName: web
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: nginx}]}}
  volumeClaimTemplates:
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeMode: Filesystem}
`)
	rep := judge(t, a, live, desired,
		drift("/spec/volumeClaimTemplates/0/apiVersion", model.Added, "v1", "helm-controller/Apply"),
		drift("/spec/volumeClaimTemplates/0/spec/volumeMode", model.Added, "Filesystem", "helm-controller/Apply"))
	for _, p := range []string{"/spec/volumeClaimTemplates/0/apiVersion", "/spec/volumeClaimTemplates/0/spec/volumeMode"} {
		for _, d := range rep.Drifts {
			for _, v := range d.Verdicts {
				if d.Path == p && v.Kind == model.Reverted {
					t.Errorf("%s, a server default inside the list Helm applied: reverted %q", p, v.Reason)
				}
			}
		}
	}
}

// TestHelmDefaultInsideAnAtomicListKubectlTook (make differential
// ENGINE=flux-helm seed 60639): a client-side apply took a NetworkPolicy's
// atomic ports list; the release's port comes back with the server's
// protocol: TCP, so the protocol is no drift (was reported).
func TestHelmDefaultInsideAnAtomicListKubectlTook(t *testing.T) {
	hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: apps}, spec: {interval: 1h, driftDetection: {mode: warn}, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: r}}}}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{hr}})
	desired := obj(t, `{apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: web, namespace: apps}, spec: {podSelector: {matchLabels: {app: web}}, ingress: [{ports: [{port: 80}]}]}}`)
	live := obj(t, `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web
  namespace: apps
  labels: {helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: apps}
  managedFields:
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:ingress: {}}}
spec:
  podSelector: {matchLabels: {app: web}}
  ingress: [{ports: [{port: 80, protocol: TCP}]}]
`)
	rep := judge(t, a, live, desired, drift("/spec/ingress/0/ports/0/protocol", model.Added, "TCP", "kubectl-client-side-apply/Update"))
	for _, d := range rep.Drifts {
		for _, v := range d.Verdicts {
			if d.Path == "/spec/ingress/0/ports/0/protocol" && (v.Kind == model.Reported || v.Kind == model.Reverted) {
				t.Errorf("a port's defaulted protocol: %s %q", v.Kind, v.Reason)
			}
		}
	}
}
