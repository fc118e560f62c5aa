package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

const renderRepo = "../flux/render/testdata/repo"

func TestRenderCheckout(t *testing.T) {
	stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", renderRepo)
	if code != ExitNoDrift {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "s3cr3t-token") {
		t.Errorf("a Secret value is printed:\n%s", stdout)
	}
	// HelmRelease flux-system/web first (API group order), then both
	// Kustomizations: flux-system/plain's
	// Service, then flux-system/podinfo's ConfigMap and Deployment.
	var names []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "  name: ") {
			names = append(names, strings.TrimPrefix(l, "  name: "))
		}
	}
	if got := strings.Join(names, ","); got != "team-b-web,web,pre-kept,pre-podinfo" {
		t.Errorf("objects %s, want team-b-web,web,pre-kept,pre-podinfo:\n%s", got, stdout)
	}
}

func TestRenderJSONOneKustomization(t *testing.T) {
	stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", renderRepo, "--kustomization", "flux-system/plain", "-o", "json")
	if code != ExitNoDrift {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var list struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "List" || len(list.Items) != 1 || list.Items[0]["kind"] != "Service" {
		t.Errorf("got %s", stdout)
	}
}

// TestRenderOneFailsOthersRender: a Kustomization whose path leaves the
// checkout fails with one line naming it, the other is still printed,
// and the exit code is 2.
func TestRenderOneFailsOthersRender(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) { testutil.WriteFile(t, dir, name, body) }
	ks := func(name, path string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name +
			"\n  namespace: flux-system\nspec:\n  interval: 1m\n  prune: true\n  path: " + path +
			"\n  sourceRef:\n    kind: GitRepository\n    name: repo\n"
	}
	write("clusters/ks.yaml", ks("good", "./app")+"---\n"+ks("bad", "../../etc"))
	write("app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n")
	write("values.yaml", "replicas: 2\n") // not a manifest: skipped
	stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", dir)
	if code != ExitFailure {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stdout, "name: cm") {
		t.Errorf("the good Kustomization is not printed:\n%s", stdout)
	}
	if !strings.Contains(stderr, `error: Kustomization/flux-system/bad: spec.path: path "../../etc" leaves the source directory`) {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestRenderBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"render"}, "render needs --source DIR"},
		{[]string{"render", "--source", renderRepo, "-o", "table"}, `invalid -o "table"`},
		{[]string{"render", "--source", renderRepo, "--source-map", "nourl"}, `invalid --source-map "nourl"`},
		{[]string{"render", "--source", renderRepo, "--kustomization", "a/b/c"}, `invalid --kustomization "a/b/c"`},
		{[]string{"render", "--source", "/nonexistent/dir"}, "--source /nonexistent/dir"},
		{[]string{"render", "--source", renderRepo, "--kustomization", "flux-system/nope"}, "Kustomization/flux-system/nope: not found"},
	} {
		_, stderr, code, _ := run(t, KubectlFrontend, c.args...)
		if code != ExitFailure || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestExplainSourceSameAsFile: explain --source gives the report of
// explain -f with the hand-rendered file; only the desired source differs.
func TestExplainSourceSameAsFile(t *testing.T) {
	live := "testdata/render/service-web-live.yaml"
	report := func(args ...string) map[string]any {
		t.Helper()
		stdout, stderr, code, _ := run(t, KubectlFrontend, append([]string{"explain", "--live-file", live, "-o", "json", "--engine", "flux"}, args...)...)
		if code != ExitDrift {
			t.Fatalf("%v: exit %d, want 1 (drift): %s", args, code, stderr)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	rendered := report("--source", renderRepo)
	file := report("-f", "testdata/render/service-web-hand-rendered.yaml")
	if rendered["desiredSource"] != "rendered" || file["desiredSource"] != "file" {
		t.Errorf("desiredSource %v / %v", rendered["desiredSource"], file["desiredSource"])
	}
	delete(rendered, "desiredSource")
	delete(file, "desiredSource")
	a, _ := json.MarshalIndent(rendered, "", " ")
	b, _ := json.MarshalIndent(file, "", " ")
	if string(a) != string(b) {
		t.Errorf("--source report:\n%s\n-f report:\n%s", a, b)
	}
	if !strings.Contains(string(a), `"path": "/spec/ports/0"`) {
		t.Errorf("the port drift is missing:\n%s", a)
	}
}

func TestExplainSourceErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--source", renderRepo, "-f", "x.yaml"}, "--source and -f/-k are mutually exclusive"},
		{[]string{"--source", renderRepo, "--kustomization", "a/b", "--kustomization", "c/d"}, "give one of --kustomization, --helmrelease or --app, once"},
		{[]string{"--kustomization", "a/b"}, "need --source DIR"},
		{[]string{"--helmrelease", "a/b/c"}, `invalid --helmrelease "a/b/c"`},
		{[]string{"--source", renderRepo, "--kustomization", "flux-system/nope"}, "Kustomization/flux-system/nope: not found"},
	} {
		args := append([]string{"explain", "--live-file", "testdata/render/service-web-live.yaml"}, c.args...)
		_, stderr, code, _ := run(t, KubectlFrontend, args...)
		if code != ExitFailure || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	// A live object no engine object claims.
	dir := t.TempDir()
	p := filepath.Join(dir, "live.yaml")
	if err := os.WriteFile(p, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code, _ := run(t, KubectlFrontend, "explain", "--live-file", p, "--source", renderRepo)
	if code != ExitFailure || !strings.Contains(stderr, "name it with --kustomization") {
		t.Errorf("unowned: exit %d, stderr %q", code, stderr)
	}
}

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

// TestRenderRemoteBaseSilentServer: render --source on a Kustomization
// whose remote base never answers says on stderr that it fetches, then
// gives up at --request-timeout with exit 2 and one error line naming
// the URL; --no-remote-bases refuses it without connecting (issue 29).
func TestRenderRemoteBaseSilentServer(t *testing.T) {
	srv := testutil.NewSilentServer(t)
	url := "http://" + srv.Addr + "/base/deploy.yaml"
	dir := t.TempDir()
	testutil.WriteFile(t, dir, "clusters/ks.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: remote, namespace: flux-system}\n"+
		"spec: {interval: 1m, prune: true, path: ./app, sourceRef: {kind: GitRepository, name: repo}}\n")
	testutil.WriteFile(t, dir, "app/kustomization.yaml", "resources:\n- "+url+"\n")
	start := time.Now()
	_, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", dir, "--request-timeout", "1s")
	if code != ExitFailure {
		t.Fatalf("exit %d, want 2\n%s", code, stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s with --request-timeout 1s", d)
	}
	if !strings.Contains(stderr, "warning: kustomize build of ") || !strings.Contains(stderr, "fetches remote bases: "+url) {
		t.Errorf("no warning that it fetches:\n%s", stderr)
	}
	var errLines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "still running after 1s") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], "fetching "+url) {
		t.Errorf("want one error line naming the timeout and the URL:\n%s", stderr)
	}
	if n := strings.Count(stderr, "error: "); n != 1 {
		t.Errorf("%d error lines for one engine object, want 1:\n%s", n, stderr)
	}
	before := srv.Accepted()
	_, stderr, code, _ = run(t, KubectlFrontend, "render", "--source", dir, "--no-remote-bases")
	if code != ExitFailure || !strings.Contains(stderr, "refused by --no-remote-bases") || srv.Accepted() != before {
		t.Errorf("--no-remote-bases: exit %d, %d connections\n%s", code, srv.Accepted()-before, stderr)
	}
}

// TestKustomizeFlagRemoteBase: -k says on stderr that it fetches a
// remote base and stops at --request-timeout naming the URL, as
// --source does (issue 29).
func TestKustomizeFlagRemoteBase(t *testing.T) {
	srv := testutil.NewSilentServer(t)
	url := "http://" + srv.Addr + "/base/deploy.yaml"
	dir := t.TempDir()
	testutil.WriteFile(t, dir, "kustomization.yaml", "resources:\n- "+url+"\n")
	live := testutil.WriteFile(t, t.TempDir(), "live.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: shop}\ndata: {a: b}\n")
	start := time.Now()
	_, stderr, code, _ := run(t, KubectlFrontend, "explain", "--live-file", live, "-k", dir, "--request-timeout", "1s")
	if code != ExitFailure {
		t.Fatalf("exit %d, want 2\n%s", code, stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s with --request-timeout 1s", d)
	}
	if !strings.Contains(stderr, "warning: kustomize build of "+dir+" fetches remote bases: "+url) ||
		!strings.Contains(stderr, "still running after 1s (fetching "+url+")") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestRenderTimeoutFlag: --render-timeout bounds a chart's rendering
// (30 s by default): a template that loops stops the command with one
// line naming the chart and the template, exit 2; a negative value is
// refused.
func TestRenderTimeoutFlag(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, dir, "clusters/hr.yaml", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: loop, namespace: flux-system}\n"+
		"spec: {interval: 1m, chart: {spec: {chart: ./charts/c, sourceRef: {kind: GitRepository, name: repo}}}}\n")
	testutil.WriteFile(t, dir, "charts/c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
	testutil.WriteFile(t, dir, "charts/c/templates/loop.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {v: \"{{ range 2000000000 }}{{ end }}\"}\n")
	_, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", dir, "--render-timeout", "200ms")
	if code != ExitFailure {
		t.Fatalf("exit %d, want 2\n%s", code, stderr)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, "error: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "charts/c, template c/templates/loop.yaml") || !strings.Contains(lines[0], "still running after 200ms") {
		t.Errorf("want one error line naming the chart, the template and 200ms:\n%s", stderr)
	}
	_, stderr, code, _ = run(t, KubectlFrontend, "render", "--source", dir, "--render-timeout", "-1s")
	if code != ExitFailure || !strings.Contains(stderr, "invalid --render-timeout -1s") {
		t.Errorf("negative: exit %d\n%s", code, stderr)
	}
}

// TestRenderKustomizationNamespaceMustMatch: --kustomization NS/NAME
// names a Kustomization of the checkout without metadata.namespace only
// in the namespace its parent applies it to (render's Env.Lands wiring).
func TestRenderKustomizationNamespaceMustMatch(t *testing.T) {
	const repo = "../flux/render/testdata/kustomizations-without-namespace"
	_, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", repo, "--kustomization", "wrong-ns/child")
	if code != ExitFailure || !strings.Contains(stderr, "error: Kustomization/wrong-ns/child: not found in the cluster or the checkout") {
		t.Errorf("wrong-ns/child: exit %d, stderr:\n%s", code, stderr)
	}
	stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", repo, "--kustomization", "team-x/child")
	if code != ExitNoDrift || !strings.Contains(stdout, "kustomize.toolkit.fluxcd.io/namespace: team-x") {
		t.Errorf("team-x/child: exit %d:\n%s\n%s", code, stdout, stderr)
	}
}
