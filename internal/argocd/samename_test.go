package argocd

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// envApp is one environment's copy of an Application: same namespace/name,
// its own source path and rule.
func envApp(env, pointer string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: cert-manager
  namespace: argocd
spec:
  source: {repoURL: https://example.com/platform.git, path: %s/cert-manager}
  destination: {server: https://%s.example.com, namespace: cert-manager}
  ignoreDifferences:
  - group: apps
    kind: Deployment
    jsonPointers: [%s]
`, env, env, pointer)
}

// TestSameApplicationNameInTwoFiles: per-environment folders repeat an
// Application's namespace/name; the adapter keeps the rules of both files
// (each with its own origin) and both source paths own their files.
func TestSameApplicationNameInTwoFiles(t *testing.T) {
	var docs []source.Document
	for _, f := range []struct{ env, pointer string }{{"staging", "/spec/replicas"}, {"production", "/spec/paused"}} {
		d, err := source.Decode([]byte(envApp(f.env, f.pointer)), f.env+"/cert-manager.yaml")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d...)
	}
	a, err := New(Options{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := a.Rules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules {
		if r.Type == RuleIgnoreDifferences {
			got = append(got, fmt.Sprintf("%s %s:%d %v", r.Origin.Object, r.Origin.File, r.Origin.Line, r.JSONPointers))
		}
	}
	want := []string{
		"Application argocd/cert-manager staging/cert-manager.yaml:10 [/spec/replicas]",
		"Application argocd/cert-manager production/cert-manager.yaml:10 [/spec/paused]",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
	for _, f := range []string{"staging/cert-manager/deployment.yaml", "production/cert-manager/deployment.yaml"} {
		owners := a.FileOwners(f)
		if len(owners) != 1 || owners[0].Ref() != "Application argocd/cert-manager" {
			t.Errorf("FileOwners(%s) = %+v, want the Application of that environment", f, owners)
		}
	}
}
