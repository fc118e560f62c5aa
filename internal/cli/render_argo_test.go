package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderArgoApps: every Application of a checkout is rendered; a
// plugin source fails with one line naming its Application, the other is
// still printed, exit 2; --app names one.
func TestRenderArgoApps(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"apps.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  destination: {namespace: shop}
  source: {repoURL: https://example.com/repo.git, path: web}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: cdk, namespace: argocd}
spec:
  destination: {namespace: shop}
  source: {repoURL: https://example.com/repo.git, path: web, plugin: {name: cdk8s}}
`,
		"web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", dir)
	if code != ExitFailure {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	if !strings.Contains(stdout, "argocd.argoproj.io/tracking-id: web:/ConfigMap:shop/settings") || !strings.Contains(stdout, "namespace: shop") {
		t.Errorf("Application web is not printed as Argo CD would apply it:\n%s", stdout)
	}
	if !strings.Contains(stderr, "error: Application/argocd/cdk: spec.source") || !strings.Contains(stderr, "cdk8s: not supported") {
		t.Errorf("stderr:\n%s", stderr)
	}
	stdout, stderr, code, _ = run(t, KubectlFrontend, "render", "--source", dir, "--app", "web")
	if code != ExitNoDrift || strings.Count(stdout, "kind: ConfigMap") != 1 {
		t.Errorf("--app web: exit %d, %s\n%s", code, stderr, stdout)
	}
	for _, c := range []struct{ arg, want string }{
		{"a/b/c", `invalid --app "a/b/c"`},
		{"nope", "Application/argocd/nope: not found"},
	} {
		_, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", dir, "--app", c.arg)
		if code != ExitFailure || !strings.Contains(stderr, c.want) {
			t.Errorf("--app %s: exit %d, stderr %q; want 2 and %q", c.arg, code, stderr, c.want)
		}
	}
}
