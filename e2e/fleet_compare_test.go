//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// TestFleetCompareContexts (issue 18): one Argo CD per spoke, their
// argocd-cm differing in one rule; compare --contexts reads each spoke's
// once and puts them side by side: the common rule is equivalent across
// the spokes, the extra one is only spoke-a's. A context whose cluster is
// down is one warning, the others still compared.
func TestFleetCompareContexts(t *testing.T) {
	f := fleet(t)
	cm := func(extra string) string {
		return argocdCM("argocd", `  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers:
    - /spec/replicas
`+extra)
	}
	spokeA := cm(`  resource.customizations.ignoreDifferences.apps_StatefulSet: |
    jsonPointers:
    - /spec/replicas
`)
	for c, m := range map[string]string{"spoke-a": spokeA, "spoke-b": cm("")} {
		f.kubectl(t, c, RunOpts{}, "create", "namespace", "argocd")
		t.Cleanup(func() {
			if os.Getenv("DRIFT_E2E_KEEP") == "" {
				E.Run(t, RunOpts{Kubeconfig: f.kubeconfig}, filepath.Join(E.KubeBinDir, "kubectl"), "--context", c, "delete", "namespace", "argocd", "--wait=false")
			}
		})
		f.apply(t, c, m)
	}

	res := f.drift(t, "compare", "--contexts", "spoke-a,spoke-b", "-o", "json")
	if res.Code != 0 {
		t.Fatalf("compare --contexts: exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var doc struct {
		Results []struct {
			Rule         model.Rule
			Status       string
			Counterparts []struct{ Origin model.Origin }
		}
	}
	DecodeJSON(t, res.Stdout, &doc)
	got := map[string]string{}
	for _, r := range doc.Results {
		if r.Rule.Type != "argocd.ignoreDifferences" {
			continue // the controller-wide defaults each instance has (compareoptions)
		}
		var cps []string
		for _, cp := range r.Counterparts {
			cps = append(cps, cp.Origin.Context)
		}
		got[r.Rule.Origin.Context+" "+r.Rule.Target.Kind] = r.Status + " " + strings.Join(cps, ",")
	}
	want := map[string]string{
		"spoke-a Deployment":  "equivalent spoke-b",
		"spoke-a StatefulSet": "only-argocd@spoke-a ",
		"spoke-b Deployment":  "equivalent spoke-a",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("compare --contexts: %v\nwant %v\n%s", got, want, res.Stdout)
	}

	// The table: a CONTEXT column, the other spoke named.
	res = f.drift(t, "compare", "--contexts", "spoke-a,spoke-b")
	for _, w := range []string{"CONTEXT", "in context spoke-b", "only-argocd@spoke-a"} {
		if res.Code != 0 || !strings.Contains(res.Stdout, w) {
			t.Errorf("table (exit %d) lacks %q:\n%s%s", res.Code, w, res.Stdout, res.Stderr)
		}
	}

	// A context that does not answer is a warning; the rest is compared
	// (in a copy of the fleet kubeconfig: other tests list its contexts).
	b, err := os.ReadFile(f.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, b, 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(E.KubeBinDir, "kubectl")
	for _, args := range [][]string{
		{"config", "set-cluster", "nowhere", "--server", "https://127.0.0.1:1"},
		{"config", "set-context", "nowhere", "--cluster", "nowhere", "--user", "spoke-a"},
	} {
		if r := E.Run(t, RunOpts{Kubeconfig: kc}, kubectl, args...); r.Code != 0 {
			t.Fatalf("kubectl %v: %s", args, r.Stderr)
		}
	}
	res = E.Run(t, RunOpts{Kubeconfig: kc}, KubectlDrift, "compare", "--contexts", "spoke-a,nowhere", "-o", "json")
	if res.Code != 0 || !strings.Contains(res.Stderr, "warning: skipped context nowhere: ") || !strings.Contains(res.Stdout, "only-argocd@spoke-a") {
		t.Errorf("with an unreachable context: exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
}
