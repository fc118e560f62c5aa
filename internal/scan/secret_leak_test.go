package scan

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// rawSource lists fixed objects.
type rawSource struct{ items map[string][][]byte }

func (s rawSource) List(_ context.Context, k Kind, _, _ string, fn func([]byte) error) (string, error) {
	for _, it := range s.items[k.GVR.Resource] {
		if err := fn(it); err != nil {
			return "", err
		}
	}
	return "1", nil
}

// TestScanNeverLeaksSecretValues scans a drifted Secret whose values carry
// a marker, judged by Argo CD rules whose jq expressions fail on those
// values (gojq quotes them), and prints every output format.
func TestScanNeverLeaksSecretValues(t *testing.T) {
	const marker = "QZXJWMARK"
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	lastApplied := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"shop"},"stringData":{"password":"la-%s"},"data":{"token":%q}}`, marker, b64("la-"+marker+"-t"))
	live := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  annotations:
    argocd.argoproj.io/tracking-id: shop:/Secret:shop/db
    kubectl.kubernetes.io/last-applied-configuration: '%s'
  managedFields:
  - {apiVersion: v1, fieldsType: FieldsV1, manager: argocd-controller, operation: Update, time: "2026-01-01T00:00:00Z",
     fieldsV1: {"f:data": {".": {}}, "f:type": {}, "f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}}
  - {apiVersion: v1, fieldsType: FieldsV1, manager: kubectl-edit, operation: Update, time: "2026-01-02T00:00:00Z",
     fieldsV1: {"f:data": {"f:token": {}, "f:password": {}}}}
type: Opaque
data: {token: %s, password: %s}
`, lastApplied, b64("live-"+marker), b64("pw-"+marker))
	raw, err := yaml.YAMLToJSON([]byte(live))
	if err != nil {
		t.Fatal(err)
	}
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  destination: {namespace: shop, server: https://kubernetes.default.svc}
  ignoreDifferences:
  - kind: Secret
    jqPathExpressions: [".data.token | .[]", ".data | keys[0] | .[]", ".data.password | error", ".metadata.annotations[\"kubectl.kubernetes.io/last-applied-configuration\"] | .[]"]
`
	docs, err := source.Decode([]byte(app), "app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := argocd.New(argocd.Options{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), rawSource{map[string][][]byte{"secrets": {raw}}},
		Options{Kinds: []Kind{kindSecrets}, Engine: "argocd", Inspector: &Inspector{Adapters: []model.Adapter{a}}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 {
		t.Fatalf("scan found %d drifted objects, want the Secret", len(res.Items))
	}
	forms := []string{marker, b64("live-" + marker), b64("pw-" + marker), b64("la-" + marker + "-t")}
	for _, f := range Outputs {
		var buf bytes.Buffer
		if err := Print(&buf, f, res); err != nil {
			t.Fatal(err)
		}
		for _, form := range forms {
			if strings.Contains(buf.String(), form) {
				t.Errorf("-o %s leaks %q:\n%s", f, form, buf.String())
			}
		}
	}
}
