package argocd

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientfeatures "k8s.io/client-go/features"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

func yamlObj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestThreeWayDiffSchemeDefaults: Argo CD's three-way diff patches the
// scheme's defaults into the predicted state and live (gitops-engine
// pkg/diff/diff.go applyPatch), so a field Git leaves out and Kubernetes
// defaults is no difference, and a default removed from Git neither; a
// live value other than the default still is.
func TestThreeWayDiffSchemeDefaults(t *testing.T) {
	netpol := func(port string) string {
		return "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: np, namespace: ns}\n" +
			"spec:\n  podSelector: {}\n  policyTypes: [Ingress]\n  ingress:\n  - ports:\n    - " + port + "\n"
	}
	webhook := func(rule string) string {
		return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: wh}\n" +
			"webhooks:\n- name: a.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n" +
			"  clientConfig: {url: 'https://example.com/validate'}\n  rules:\n  - " + rule + "\n"
	}
	deploy := func(extra string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns}\nspec:\n  replicas: 1\n" + extra +
			"  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n" +
			"    spec: {containers: [{name: app, image: nginx}]}\n"
	}
	cases := []struct {
		name            string
		orig, git, live string
		modified        bool
	}{
		{"netpol port protocol defaulted", netpol("{port: 80}"), netpol("{port: 80}"), netpol("{port: 80, protocol: TCP}"), false},
		{"netpol port protocol other than the default", netpol("{port: 80}"), netpol("{port: 80}"), netpol("{port: 80, protocol: UDP}"), true},
		{"webhook rule scope defaulted", webhook("{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}"),
			webhook("{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}"),
			webhook("{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods], scope: '*'}"), false},
		{"default removed from Git", deploy("  revisionHistoryLimit: 10\n  progressDeadlineSeconds: 600\n"), deploy(""),
			deploy("  revisionHistoryLimit: 10\n  progressDeadlineSeconds: 600\n"), false},
		{"non-default removed from Git", deploy("  revisionHistoryLimit: 3\n"), deploy(""), deploy("  revisionHistoryLimit: 3\n"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dr, err := threeWayDiff(yamlObj(t, c.orig), yamlObj(t, c.git), yamlObj(t, c.live))
			if err != nil {
				t.Fatal(err)
			}
			if dr.Modified != c.modified {
				t.Errorf("modified = %v, want %v; differing: %v", dr.Modified, c.modified, changedPaths(dr.PredictedLive, dr.NormalizedLive, ""))
			}
		})
	}
}

// TestSchemeDefaultsAsArgo: the scheme defaults are those of the Kubernetes
// release Argo CD v3.2 links (1.34): a StatefulSet gets no
// rollingUpdate.maxUnavailable (a 1.37 scheme gives 1; seen with Argo CD
// v3.2.11 on a 1.37 API server: its structured-merge diff of a
// ServerSideApply StatefulSet shows the live maxUnavailable, make
// differential seed 1026). Fails when go.mod moves k8s.io/kubernetes past
// what can emulate 1.34.
func TestSchemeDefaultsAsArgo(t *testing.T) {
	if v := utilfeature.DefaultMutableFeatureGate.EmulationVersion(); v.String() != ArgoKubernetesVersion {
		t.Fatalf("feature gates emulate %s, want %s", v, ArgoKubernetesVersion)
	}
	sts := yamlObj(t, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: ns}\n"+
		"spec:\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n"+
		"    spec: {containers: [{name: db, image: postgres}]}\n")
	got, ok := withSchemeDefaults(sts).(map[string]any)
	if !ok {
		t.Fatal("not an object")
	}
	if _, has := jsonpointer.Get(got, "/spec/updateStrategy/rollingUpdate/maxUnavailable"); has {
		t.Errorf("maxUnavailable defaulted: %v", got["spec"])
	}
	if v, _ := jsonpointer.Get(got, "/spec/updateStrategy/rollingUpdate/partition"); v != int64(0) && v != float64(0) {
		t.Errorf("partition = %v (%T), want the 1.34 default 0", v, v)
	}
}

// TestDropDefaulted: a field live has and Git leaves out is no field when
// Kubernetes' defaults give it (from Git, or derived from the rest of live:
// sessionAffinityConfig after sessionAffinity ClientIP, make differential
// seeds 5011, 5055) and Argo CD's diff does not show it; any other value,
// or a field the diff shows, stays.
func TestDropDefaulted(t *testing.T) {
	git := yamlObj(t, "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ns}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n")
	live := yamlObj(t, "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ns}\nspec:\n  selector: {app: web}\n"+
		"  ports: [{port: 80, protocol: TCP, targetPort: 80}]\n  sessionAffinity: ClientIP\n"+
		"  sessionAffinityConfig: {clientIP: {timeoutSeconds: 10800}}\n  internalTrafficPolicy: Local\n  type: ClusterIP\n")
	added := func(p string) model.FieldDrift { return model.FieldDrift{Path: p, Change: model.Added} }
	drifts := []model.FieldDrift{
		added("/spec/sessionAffinity"), added("/spec/sessionAffinityConfig/clientIP/timeoutSeconds"),
		added("/spec/internalTrafficPolicy"), added("/spec/type"),
	}
	var got []string
	for _, d := range dropDefaulted(drifts, []string{"/spec/sessionAffinity"}, git, live, withSchemeDefaults) {
		got = append(got, d.Path)
	}
	want := []string{"/spec/sessionAffinity", "/spec/internalTrafficPolicy"}
	if !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
}

// TestClientGatesUnaffected: emulating Kubernetes 1.34 for the scheme
// defaults leaves client-go's gates at client-go's own defaults
// (k8s.io/kubernetes/pkg/features ties them to the emulated gate): with
// 1.34's, WatchListClient was off and serve's informers held each kind's
// whole LIST before their transform (issue 35).
func TestClientGatesUnaffected(t *testing.T) {
	if utilfeature.DefaultFeatureGate.Enabled("WatchListClient") {
		t.Log("the emulated gate has WatchListClient on: this test no longer tells the two apart")
	}
	for _, f := range []clientfeatures.Feature{clientfeatures.WatchListClient, clientfeatures.InformerResourceVersion, clientfeatures.InOrderInformersBatchProcess} {
		if !clientfeatures.FeatureGates().Enabled(f) {
			t.Errorf("client-go gate %s is off, want client-go v0.37's default (on)", f)
		}
	}
	if clientfeatures.FeatureGates().Enabled(clientfeatures.ClientsAllowCBOR) {
		t.Errorf("client-go gate %s is on, want its default (off)", clientfeatures.ClientsAllowCBOR)
	}
	t.Setenv("KUBE_FEATURE_WatchListClient", "false")
	if clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		t.Error("KUBE_FEATURE_WatchListClient=false did not turn the gate off")
	}
}

// A DaemonSet's template generation annotation follows a template write
// (kubectl set env) in the same request: not listed when Argo CD's diff
// does not show it (seeds 52136, 52182: listed left-alone, noise), kept
// when it does.
func TestDropBookkeeping(t *testing.T) {
	gen := "/metadata/annotations/deprecated.daemonset.template.generation"
	drifts := []model.FieldDrift{
		{Path: gen, Change: model.Changed, Live: "2", Desired: nil},
		{Path: "/spec/template/spec/containers/0/env", Change: model.Added},
	}
	got := dropBookkeeping(slices.Clone(drifts), []string{"/spec/template/spec/containers/0/env"})
	if len(got) != 1 || got[0].Path != "/spec/template/spec/containers/0/env" {
		t.Errorf("not shown by Argo CD: got %+v, want only the env", got)
	}
	if got := dropBookkeeping(slices.Clone(drifts), []string{gen}); len(got) != 2 {
		t.Errorf("shown by Argo CD: got %+v, want both", got)
	}
}
