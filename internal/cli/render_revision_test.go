package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestRenderExternalArtifactSources: a Flux Kustomization whose sourceRef
// and a HelmRelease whose chartRef is an ExternalArtifact (an artifact a
// controller publishes in the cluster, no path of the checkout) are named
// on stderr, one line each with the --source-map entry that would map
// them, and the other objects still render (exit 2, as for the other
// unreachable sources); mapped with --source-map
// ExternalArtifact/NAMESPACE/NAME=DIR, both render from that directory.
func TestRenderExternalArtifactSources(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "clusters/flux.yaml"), `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: generated, namespace: flux-system}
spec:
  interval: 10m
  path: ./deploy
  prune: true
  sourceRef: {kind: ExternalArtifact, name: gen}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: plain, namespace: flux-system}
spec:
  interval: 10m
  path: ./plain
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: web}
spec:
  interval: 10m
  chartRef: {kind: ExternalArtifact, name: web-chart, namespace: flux-system}
`)
	writeFile(t, filepath.Join(dir, "plain/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: default}\ndata: {k: v}\n")

	stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", dir)
	if code != ExitFailure {
		t.Errorf("exit %d, want %d", code, ExitFailure)
	}
	if !strings.Contains(stdout, "name: plain") {
		t.Errorf("the Kustomization of a GitRepository is not rendered:\n%s", stdout)
	}
	for _, want := range []string{
		"error: Kustomization/flux-system/generated: sourceRef ExternalArtifact/flux-system/gen: an artifact a controller publishes in the cluster, not a directory of the checkout: not available offline; map it with --source-map ExternalArtifact/flux-system/gen=DIR\n",
		"error: HelmRelease/web/web: chartRef ExternalArtifact/flux-system/web-chart: an artifact a controller publishes in the cluster, not a directory of the checkout: not available offline; map it with --source-map ExternalArtifact/flux-system/web-chart=DIR\n",
		"error: 2 of 3 engine objects failed to render\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "no such file") {
		t.Errorf("the artifact was looked for in the checkout:\n%s", stderr)
	}

	// Mapped: the artifact's directory (a kustomization's tree, a chart).
	artifact, chart := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(artifact, "deploy/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: generated, namespace: default}\ndata: {k: v}\n")
	writeFile(t, filepath.Join(chart, "Chart.yaml"), "apiVersion: v2\nname: web\nversion: 0.1.0\n")
	writeFile(t, filepath.Join(chart, "templates/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-chart}\n")
	stdout, stderr, code, _ = run(t, KubectlFrontend, "render", "--source", dir,
		"--source-map", "ExternalArtifact/flux-system/gen="+artifact,
		"--source-map", "ExternalArtifact/flux-system/web-chart="+chart)
	if code != 0 {
		t.Fatalf("exit %d with the artifacts mapped:\n%s", code, stderr)
	}
	for _, want := range []string{"name: generated", "kustomize.toolkit.fluxcd.io/name: generated", "name: web-chart", "helm.toolkit.fluxcd.io/name: web"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("mapped render lacks %q:\n%s", want, stdout)
		}
	}

	// A malformed ExternalArtifact key is refused before anything is read.
	_, stderr, code, _ = run(t, KubectlFrontend, "render", "--source", dir, "--source-map", "ExternalArtifact/gen="+artifact)
	if code != ExitFailure || !strings.Contains(stderr, "want ExternalArtifact/NAMESPACE/NAME=DIR") {
		t.Errorf("ExternalArtifact/gen accepted (exit %d):\n%s", code, stderr)
	}
}

// revisionRepo is a real git repository: commit one (tag v1, branch
// release) has web/cm.yaml saying "one" and a kustomization whose image
// Argo CD's kustomize settings may rewrite; commit two (HEAD of main) says
// "two"; the working tree says "three" and holds the engine objects,
// uncommitted (engineObjects is given commit one). It returns the
// checkout and commit one.
func revisionRepo(t *testing.T, engineObjects func(one string) string) (dir, one string) {
	t.Helper()
	dir = t.TempDir()
	git := testutil.Git(t, dir)
	cm := func(v string) {
		writeFile(t, filepath.Join(dir, "web/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: web}\ndata: {v: \""+v+"\"}\n")
	}
	git("init", "-q", "-b", "main")
	cm("one")
	writeFile(t, filepath.Join(dir, "kust/kustomization.yaml"), "resources: [deploy.yaml]\n")
	writeFile(t, filepath.Join(dir, "kust/deploy.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: web}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec: {containers: [{name: app, image: "example.com/app:latest"}]}
`)
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	one = git("rev-parse", "HEAD")
	git("tag", "v1")
	git("branch", "release")
	cm("two")
	git("commit", "-q", "-am", "two")
	cm("three")
	writeFile(t, filepath.Join(dir, "engine/objects.yaml"), engineObjects(one))
	return dir, one
}

// TestRenderArgoTargetRevision: an Application's targetRevision is read
// from the local git history (a tag, a branch, a commit), with
// $ARGOCD_APP_REVISION and its short forms set to the resolved commit as
// the repo-server sets them, and one stderr line saying which commit was
// rendered; HEAD is the working tree, its uncommitted edits included; a
// revision the history does not hold renders the working tree with one
// line naming it.
func TestRenderArgoTargetRevision(t *testing.T) {
	// rev is quoted: a commit prefix of digits, or digits and one e, is a
	// YAML number (a fresh-clone CI run failed on one: "cannot convert
	// int64 to string").
	app := func(name, rev, path, extra string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + name + `, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: web}
  source:
    repoURL: https://git.example.com/fleet.git
    path: ` + path + `
    targetRevision: "` + rev + `"` + extra + `
---
`
	}
	dir, one := revisionRepo(t, func(one string) string {
		return app("at-tag", "v1", "web", "") + app("at-head", "HEAD", "web", "") +
			app("at-branch", "release", "kust", "\n    kustomize: {images: [\"example.com/app=example.com/app:$ARGOCD_APP_REVISION_SHORT_8\"], commonAnnotations: {rev: \"$ARGOCD_APP_REVISION\"}, commonAnnotationsEnvsubst: true}") +
			app("at-commit", one[:12], "web", "") + app("at-nowhere", "v9", "web", "")
	})

	render := func(name string) (string, string) {
		t.Helper()
		stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", dir, "--app", "argocd/"+name)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, code, stderr)
		}
		return stdout, stderr
	}
	for _, tc := range []struct {
		app, value, stderr string
	}{
		{"at-tag", "one", "warning: Application at-tag: spec.source targetRevision v1: rendered from commit " + one[:12] + " of the local git history (not the working tree: --working-tree renders it)\n"},
		{"at-commit", "one", "warning: Application at-commit: spec.source targetRevision " + one[:12] + ": rendered from commit " + one[:12]},
		{"at-head", "three", ""},
		{"at-nowhere", "three", "warning: Application at-nowhere: spec.source targetRevision v9: not a branch, tag or commit of the local git history: rendered from the working tree of " + dir},
	} {
		stdout, stderr := render(tc.app)
		if !strings.Contains(stdout, `v: "`+tc.value+`"`) && !strings.Contains(stdout, "v: "+tc.value+"\n") {
			t.Errorf("%s: rendered\n%s\nwant the ConfigMap of %q", tc.app, stdout, tc.value)
		}
		if (tc.stderr == "") != (stderr == "") || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s: stderr %q, want %q", tc.app, stderr, tc.stderr)
		}
	}
	// --working-tree: the checkout as it is, without a word.
	stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", dir, "--app", "argocd/at-tag", "--working-tree")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "v: three\n") {
		t.Errorf("--working-tree: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	stdout, _ = render("at-branch")
	for _, want := range []string{"image: example.com/app:" + one[:8], "rev: " + one} {
		if !strings.Contains(stdout, want) {
			t.Errorf("at-branch: $ARGOCD_APP_REVISION not the commit of release (%q):\n%s", want, stdout)
		}
	}
	if out, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); err != nil || string(out) != " M web/cm.yaml\n?? engine/\n" {
		t.Errorf("the repository changed: %q %v", out, err)
	}
}

// TestRenderFluxGitRepositoryRef: a Kustomization's GitRepository ref
// (tag, branch, commit, name) is read from the local git history with one
// line saying which commit; a branch the history does not hold, or a
// semver range, renders the working tree with one line naming it.
func TestRenderFluxGitRepositoryRef(t *testing.T) {
	objects := func(name, ref string) string {
		return `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ` + name + `, namespace: flux-system}
spec: {interval: 1m, url: "https://git.example.com/fleet.git", ref: ` + ref + `}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ` + name + `, namespace: flux-system}
spec: {interval: 1m, path: ./web, prune: true, sourceRef: {kind: GitRepository, name: ` + name + `}}
---
`
	}
	dir, one := revisionRepo(t, func(one string) string {
		return objects("tag", "{tag: v1}") + objects("main", "{branch: main}") +
			objects("commit", "{branch: main, commit: \""+one+"\"}") + objects("refname", "{name: refs/heads/release}") +
			objects("nowhere", "{branch: gone}") + objects("semver", "{semver: \">=1.0.0\"}")
	})
	for _, tc := range []struct {
		name, value, stderr string
	}{
		{"tag", "one", "warning: GitRepository flux-system/tag spec.ref.tag v1: rendered from commit " + one[:12] + " of the local git history (not the working tree: --working-tree renders it)\n"},
		{"commit", "one", "warning: GitRepository flux-system/commit spec.ref.commit " + one + ": rendered from commit " + one[:12]},
		{"refname", "one", "warning: GitRepository flux-system/refname spec.ref.name refs/heads/release: rendered from commit " + one[:12]},
		{"main", "three", ""},
		{"nowhere", "three", "warning: GitRepository flux-system/nowhere spec.ref.branch gone: not a branch, tag or commit of the local git history: rendered from the working tree of " + dir},
		{"semver", "three", "warning: GitRepository flux-system/semver spec.ref.semver >=1.0.0: a semver range is not resolved from the local git history: rendered from the working tree of " + dir},
	} {
		stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", dir, "--kustomization", "flux-system/"+tc.name)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.name, code, stderr)
		}
		if !strings.Contains(stdout, "v: "+tc.value+"\n") && !strings.Contains(stdout, `v: "`+tc.value+`"`) {
			t.Errorf("%s: rendered\n%s\nwant the ConfigMap of %q", tc.name, stdout, tc.value)
		}
		if (tc.stderr == "") != (stderr == "") || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s: stderr %q, want %q", tc.name, stderr, tc.stderr)
		}
	}
}
