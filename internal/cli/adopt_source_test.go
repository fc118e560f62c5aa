package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

const adoptSourceData = "testdata/adopt-source"

// sourceCheckout copies the checkout of testdata/adopt-source/repo to a
// temporary directory (symlinks resolved, so that every way of naming a
// file prints the same path) and returns it.
func sourceCheckout(t *testing.T) string {
	t.Helper()
	dst, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return testutil.CopyTree(t, filepath.Join(adoptSourceData, "repo"), dst)
}

// adoptRun runs adopt offline on a live file of testdata/adopt-source.
func adoptRun(t *testing.T, obj, live string, args ...string) string {
	t.Helper()
	all := append([]string{"adopt", obj, "-n", "shop", "--live-file", filepath.Join(adoptSourceData, live)}, args...)
	stdout, stderr, code, _ := run(t, KubectlFrontend, all...)
	if code != ExitNoDrift {
		t.Fatalf("adopt %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// A Flux Kustomization whose spec.path is a kustomize overlay: --source
// finds the overlay and edits what -k edits (the image tag in images:, the
// replicas in the overlay's patch).
func TestAdoptSourceKustomizeOverlay(t *testing.T) {
	repo := sourceCheckout(t)
	fields := []string{"--field", "/spec/replicas", "--field", "/spec/template/spec/containers/0/image", "--dry-run"}
	got := adoptRun(t, "deploy/prod-web", "live-prod-web.yaml", append([]string{"--source", repo}, fields...)...)
	want := adoptRun(t, "deploy/prod-web", "live-prod-web.yaml", append([]string{"-k", filepath.Join(repo, "apps", "prod")}, fields...)...)
	if got != want {
		t.Fatalf("--source diff:\n%s\n-k diff:\n%s", got, want)
	}
	for _, s := range []string{
		"+    newTag: \"1.4.1\"   # released 2026-11-30\n",
		"/apps/prod/resources.yaml\n",
		"-  replicas: 3\n+  replicas: 5\n",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("diff lacks %q:\n%s", s, got)
		}
	}
}

// A Kustomization whose path has no kustomization.yaml: Flux generates
// one over the plain files, and --source edits the file as -f does.
func TestAdoptSourcePlainFiles(t *testing.T) {
	repo := sourceCheckout(t)
	fields := []string{"--field", "/spec/replicas", "--field", "/spec/template/spec/containers/0/image", "--dry-run"}
	got := adoptRun(t, "deploy/api", "live-api.yaml", append([]string{"--source", repo}, fields...)...)
	want := adoptRun(t, "deploy/api", "live-api.yaml", append([]string{"-f", filepath.Join(repo, "apps", "plain", "api.yaml")}, fields...)...)
	if got != want {
		t.Fatalf("--source diff:\n%s\n-f diff:\n%s", got, want)
	}
	if !strings.Contains(got, "-  replicas: 2 # two is enough\n+  replicas: 4 # two is enough\n") || !strings.Contains(got, "+          image: shop/api:2.0.1\n") {
		t.Errorf("diff:\n%s", got)
	}
}

// A HelmRelease with a local chart: a key the chart's values.yaml sets is
// edited there, as --chart does; a key the HelmRelease's inline
// spec.values set (they win over values.yaml) is edited in the
// HelmRelease's manifest, comments kept.
func TestAdoptSourceHelmRelease(t *testing.T) {
	repo := sourceCheckout(t)
	cpu := []string{"--field", "/spec/template/spec/containers/0/resources/limits/cpu", "--dry-run"}
	got := adoptRun(t, "deploy/web", "live-web.yaml", append([]string{"--source", repo}, cpu...)...)
	want := adoptRun(t, "deploy/web", "live-web.yaml", append([]string{"--chart", filepath.Join(repo, "charts", "web")}, cpu...)...)
	if got != want || !strings.Contains(got, "+    cpu: 400m # raise with care\n") {
		t.Fatalf("--source diff:\n%s\n--chart diff:\n%s", got, want)
	}

	sync := filepath.Join(repo, "flux-system", "sync.yaml")
	orig, err := os.ReadFile(sync)
	if err != nil {
		t.Fatal(err)
	}
	out := adoptRun(t, "deploy/web", "live-web.yaml", "--source", repo, "--field", "/spec/replicas")
	b, err := os.ReadFile(sync)
	if err != nil {
		t.Fatal(err)
	}
	wantFile := strings.Replace(string(orig), "replicaCount: 3 # prod runs three", "replicaCount: 6 # prod runs three", 1)
	if string(b) != wantFile || !strings.Contains(out, "wrote "+sync+": /spec/values/replicaCount") {
		t.Fatalf("out %s\nsync.yaml:\n%s", out, b)
	}
	if v, _ := os.ReadFile(filepath.Join(repo, "charts", "web", "values.yaml")); !strings.Contains(string(v), "replicaCount: 2\n") {
		t.Errorf("values.yaml changed:\n%s", v)
	}
}

// Argo CD Applications (found by the live object's tracking id) in the
// same checkout: a directory source is its manifest files, edited as -f
// edits them; a Helm source's chart key is edited in values.yaml as
// --chart does, and a key the Application's helm.valuesObject sets (it
// wins over the value files) in the Application's manifest, comments kept.
func TestAdoptSourceArgoCD(t *testing.T) {
	repo := sourceCheckout(t)
	fields := []string{"--field", "/spec/replicas", "--field", "/spec/template/spec/containers/0/image", "--dry-run"}
	got := adoptRun(t, "deploy/api", "live-argo-api.yaml", append([]string{"--source", repo}, fields...)...)
	want := adoptRun(t, "deploy/api", "live-argo-api.yaml", append([]string{"-f", filepath.Join(repo, "apps", "plain", "api.yaml")}, fields...)...)
	if got != want || !strings.Contains(got, "-  replicas: 2 # two is enough\n+  replicas: 4 # two is enough\n") {
		t.Fatalf("directory: --source diff:\n%s\n-f diff:\n%s", got, want)
	}

	cpu := []string{"--field", "/spec/template/spec/containers/0/resources/limits/cpu", "--dry-run"}
	got = adoptRun(t, "deploy/web", "live-argo-web.yaml", append([]string{"--source", repo}, cpu...)...)
	want = adoptRun(t, "deploy/web", "live-argo-web.yaml", append([]string{"--chart", filepath.Join(repo, "charts", "web")}, cpu...)...)
	if got != want || !strings.Contains(got, "+    cpu: 400m # raise with care\n") {
		t.Fatalf("helm: --source diff:\n%s\n--chart diff:\n%s", got, want)
	}
	apps := filepath.Join(repo, "argocd", "apps.yaml")
	orig, err := os.ReadFile(apps)
	if err != nil {
		t.Fatal(err)
	}
	out := adoptRun(t, "deploy/web", "live-argo-web.yaml", "--source", repo, "--field", "/spec/replicas")
	b, err := os.ReadFile(apps)
	if err != nil {
		t.Fatal(err)
	}
	wantFile := strings.Replace(string(orig), "replicaCount: 3 # prod runs three", "replicaCount: 6 # prod runs three", 1)
	if string(b) != wantFile || !strings.Contains(out, "wrote "+apps+": /spec/source/helm/valuesObject/replicaCount") {
		t.Fatalf("out %s\napps.yaml:\n%s", out, b)
	}
	if v, _ := os.ReadFile(filepath.Join(repo, "charts", "web", "values.yaml")); !strings.Contains(string(v), "replicaCount: 2\n") {
		t.Errorf("values.yaml changed:\n%s", v)
	}
}

// TestAdoptSourceArgoNamespace: Argo CD's control plane in another
// namespace than argocd. The live object's tracking id names its
// Application without a namespace (the control plane's), so with
// --argocd-namespace gitops adopt --source finds gitops/api, and --app api
// names it too; without the flag it looks in argocd, where the checkout
// has none.
func TestAdoptSourceArgoNamespace(t *testing.T) {
	repo := sourceCheckout(t)
	apps := filepath.Join(repo, "argocd", "apps.yaml")
	b, err := os.ReadFile(apps)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(apps, []byte(strings.ReplaceAll(string(b), "namespace: argocd\n", "namespace: gitops\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	fields := []string{"--field", "/spec/replicas", "--dry-run"}
	want := adoptRun(t, "deploy/api", "live-argo-api.yaml", append([]string{"-f", filepath.Join(repo, "apps", "plain", "api.yaml")}, fields...)...)
	for _, extra := range [][]string{{"--argocd-namespace", "gitops"}, {"--argocd-namespace", "gitops", "--app", "api"}} {
		got := adoptRun(t, "deploy/api", "live-argo-api.yaml", append(append([]string{"--source", repo}, extra...), fields...)...)
		if got != want || !strings.Contains(got, "+  replicas: 4 # two is enough\n") {
			t.Errorf("%v: --source diff:\n%s\n-f diff:\n%s", extra, got, want)
		}
	}
	live := filepath.Join(adoptSourceData, "live-argo-api.yaml")
	_, stderr, code, _ := run(t, KubectlFrontend, append([]string{"adopt", "deploy/api", "-n", "shop", "--live-file", live, "--source", repo}, fields...)...)
	if code != ExitFailure || !strings.Contains(stderr, "Application/argocd/api: not found") {
		t.Errorf("without --argocd-namespace: exit %d, stderr %q; want Application/argocd/api not found", code, stderr)
	}
}

func TestAdoptSourceBadInput(t *testing.T) {
	repo := sourceCheckout(t)
	// spec.path leaving the checkout.
	sync := filepath.Join(repo, "flux-system", "sync.yaml")
	b, _ := os.ReadFile(sync)
	if err := os.WriteFile(sync, []byte(strings.Replace(string(b), "path: ./apps/plain", "path: ../../etc", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(adoptSourceData, "live-api.yaml")
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"path leaves the checkout": {[]string{"deploy/api", "--live-file", live, "--source", repo, "--field", "/spec/replicas"}, `Kustomization/flux-system/plain: spec.path: path "../../etc" leaves the source directory`},
		// Its tracking annotation names an Application the checkout lacks.
		"owner not in the checkout": {[]string{"deploy/api", "--live-file", filepath.Join("testdata", "explain", "deployment-argocd-client-side-live.yaml"), "--source", repo, "--field", "/spec/replicas"}, "Application/argocd/shop: not found in the cluster or the checkout"},
		"two sources":               {[]string{"deploy/api", "--live-file", live, "--source", repo, "-k", repo}, "exactly one of"},
		"two owners":                {[]string{"deploy/api", "--live-file", live, "--source", repo, "--kustomization", "a", "--helmrelease", "b"}, "give one of --kustomization, --helmrelease or --app, once"},
	} {
		t.Run(name, func(t *testing.T) {
			_, stderr, code, _ := run(t, KubectlFrontend, append([]string{"adopt", "-n", "shop"}, c.args...)...)
			if code != ExitFailure || !strings.Contains(stderr, "error: ") || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, c.want)
			}
		})
	}
	b2, _ := os.ReadFile(filepath.Join(repo, "apps", "plain", "api.yaml"))
	if !strings.Contains(string(b2), "replicas: 2 # two is enough") {
		t.Errorf("a failed adopt wrote api.yaml:\n%s", b2)
	}
}
