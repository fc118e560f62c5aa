package scan

import (
	"bytes"
	"context"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
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
// a marker (testutil.MarkedSecret, the Secret the commands' leak test
// uses), judged by Argo CD rules whose jq expressions fail on those values
// (gojq quotes them), and prints every output format.
func TestScanNeverLeaksSecretValues(t *testing.T) {
	secret := testutil.NewMarkedSecret(t)
	raw, err := yaml.YAMLToJSON([]byte(secret.Live))
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
	for _, f := range Outputs {
		var buf bytes.Buffer
		if err := Print(&buf, f, res, 0); err != nil {
			t.Fatal(err)
		}
		if l := testutil.Leaks(buf.String(), secret.Forms); len(l) > 0 {
			t.Errorf("-o %s leaks %q:\n%s", f, l, buf.String())
		}
	}
}
