//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// TestSecretMarkerNeverLeaks: a Secret created with client-side kubectl
// apply (so its last-applied-configuration annotation holds the values),
// then edited by hand, is read from the real API server by explain and
// normalize with Argo CD rules whose jq expressions fail on its values
// (gojq quotes what it fails on). No output, in any format, may hold a
// value, raw or base64-encoded.
func TestSecretMarkerNeverLeaks(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	const marker = "QZXJWE2EMARK"
	secret := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: %s
  annotations:
    argocd.argoproj.io/tracking-id: shop:/Secret:%s/db
type: Opaque
stringData:
  password: git-%s
`, ns, ns, marker)
	E.Apply(t, secret, "--field-manager=argocd-controller")
	E.Kubectl(t, "-n", ns, "patch", "secret", "db", "--type=merge", "-p",
		fmt.Sprintf(`{"stringData":{"password":"hand-%s","extra":"x-%s"}}`, marker, marker))
	manifest := writeFile(t, "secret.yaml", secret)
	rules := writeFile(t, "app.yaml", fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  ignoreDifferences:
  - kind: Secret
    jqPathExpressions: [".data.password | .[]", ".data | keys[0] | .[]", ".data.extra | error", ".metadata.annotations[\"kubectl.kubernetes.io/last-applied-configuration\"] | .[]"]
`, ns))
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	forbidden := []string{marker, b64("git-" + marker), b64("hand-" + marker), b64("x-" + marker)}
	jqSeen := false
	for _, args := range [][]string{
		{"explain", "secret/db", "-n", ns, "--engine", "argocd", "--rules", rules},
		{"explain", "secret/db", "-n", ns, "--engine", "argocd", "--rules", rules, "-o", "json"},
		{"explain", "secret/db", "-n", ns, "--rules", rules, "-f", manifest, "-o", "yaml"},
		{"normalize", "secret/db", "-n", ns, "--engine", "argocd", "--rules", rules},
		{"normalize", "secret/db", "-n", ns, "--engine", "flux", "-o", "json"},
		{"normalize", "secret/db", "-n", ns, "--engine", "argocd", "--rules", rules, "--diff", "-f", manifest},
	} {
		res := E.Drift(t, args...)
		if res.Code > 1 {
			t.Errorf("%v: exit %d\n%s", args, res.Code, res.Stderr)
		}
		for _, v := range forbidden {
			if strings.Contains(res.Stdout+res.Stderr, v) {
				t.Errorf("%v printed %q:\n%s\n%s", args, v, res.Stdout, res.Stderr)
			}
		}
		if strings.Contains(res.Stdout, "cannot iterate over") {
			jqSeen = true
		}
	}
	if !jqSeen {
		t.Error("no run reported the failing jq rules: the jq error path went untested")
	}
}
