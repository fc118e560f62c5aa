package argocd

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
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
