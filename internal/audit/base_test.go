package audit

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// gitRepo is a throwaway Git repository for --base tests.
type gitRepo struct {
	t   *testing.T
	dir string
	run func(args ...string) string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	dir := t.TempDir()
	r := &gitRepo{t: t, dir: dir, run: testutil.Git(t, dir)}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	return r.run(args...)
}

func (r *gitRepo) commit(msg string, files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		testutil.WriteFile(r.t, r.dir, name, content)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
}

// baseKs is the Kustomization of the base revision: one ignore rule.
func baseKs(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("testdata/base/apps-ks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const addedRule = `    - paths: ["/spec/replicas"]
      target: {kind: deployment}
`

const baseDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: web
          image: nginx
`

// TestBaseReportsOnlyTheAddedRule: the first commit already holds a rule
// with findings (dangerous, unjustified) and a HelmRelease without drift
// detection; the second adds one rule with findings of its own (misspelt
// kind, no justification). --base HEAD~1 reports the added rule only.
func TestBaseReportsOnlyTheAddedRule(t *testing.T) {
	repo := newGitRepo(t)
	repo.commit("shop with one rule", map[string]string{
		"flux/apps-ks.yaml":    baseKs(t),
		"manifests/web.yaml":   baseDeployment,
		"flux/podinfo-hr.yaml": "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: flux-system}\nspec: {interval: 5m}\n",
	})
	// DRIFT008 is opt-in: enabled, the release without drift detection
	// is a finding of the base.
	full, err := Run(Options{Root: repo.dir, Paths: []string{repo.dir}, Config: driftDetectionOn(), Extractors: testExtractors(), Engines: testEngines()})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Findings) < 3 {
		t.Fatalf("the base commit should already have findings (dangerous, unjustified, drift off): %+v", full.Findings)
	}
	repo.commit("add a rule", map[string]string{
		"flux/apps-ks.yaml": baseKs(t) + addedRule,
	})
	res, err := RunBase(context.Background(), Options{Root: repo.dir, Paths: []string{repo.dir}, Config: driftDetectionOn(), Extractors: testExtractors(), Engines: testEngines()}, "HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		got = append(got, string(f.Check)+" "+f.Position()+" "+string(f.Change))
	}
	want := []string{
		"DRIFT006 flux/apps-ks.yaml:13:7 added",
		"DRIFT010 flux/apps-ks.yaml:13:7 added",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("--base HEAD~1 findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Base != "HEAD~1" {
		t.Errorf("Base = %q", res.Base)
	}

	// Removing the old rule and widening nothing: only good news.
	repo.commit("drop the image rule", map[string]string{
		"flux/apps-ks.yaml": strings.Replace(baseKs(t), `    - paths: ["/spec/template/spec/containers/0/image"]
      target: {kind: Deployment, name: web}
`, addedRule, 1),
	})
	res, err = RunBase(context.Background(), Options{Root: repo.dir, Paths: []string{"flux"}, Extractors: testExtractors(), Engines: testEngines()}, "HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, f := range res.Findings {
		got = append(got, string(f.Check)+" "+string(f.Severity)+" "+f.File+" "+string(f.Change))
	}
	want = []string{"DRIFT013 note flux/apps-ks.yaml removed"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after removing a rule:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestBaseWidenedRule(t *testing.T) {
	repo := newGitRepo(t)
	narrow := strings.Replace(baseKs(t), "/spec/template/spec/containers/0/image", "/spec/replicas", 1)
	narrow = strings.Replace(narrow, "  ignore:\n", "  ignore:\n    # the HPA owns replicas\n", 1)
	repo.commit("narrow", map[string]string{"flux/apps-ks.yaml": narrow, "manifests/web.yaml": baseDeployment})
	wide := strings.Replace(narrow, `"/spec/replicas"`, `"/spec"`, 1)
	repo.commit("wide", map[string]string{"flux/apps-ks.yaml": wide})
	res, err := RunBase(context.Background(), Options{Root: repo.dir, Paths: []string{"."}, Extractors: testExtractors(), Engines: testEngines()}, "HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Check != auditapi.CheckTooBroad || res.Findings[0].Change != ChangeWidened {
		t.Errorf("want one too-broad finding on the widened rule, got %+v", res.Findings)
	}
}

func TestBaseErrors(t *testing.T) {
	repo := newGitRepo(t)
	repo.commit("one", map[string]string{"manifests/web.yaml": baseDeployment})
	if _, err := RunBase(context.Background(), Options{Root: repo.dir, Paths: []string{"."}}, "no-such-ref"); err == nil || !strings.Contains(err.Error(), "not a commit") {
		t.Errorf("unknown ref: err = %v", err)
	}
	if _, err := GitTopLevel(context.Background(), t.TempDir()); err == nil {
		t.Error("GitTopLevel outside a repository succeeded")
	}
}
