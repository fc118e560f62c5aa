package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// runAudit runs `kubectl drift audit ARGS` the way Main does and returns
// the exit code and both streams.
func runAudit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code := Run(context.Background(), KubectlFrontend, streams, append([]string{"audit"}, args...))
	return code, out.String(), errOut.String()
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	return testutil.WriteTree(t, files)
}

const auditDeployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {replicas: 1}\n"

// A HelmRelease without driftDetection is a warning (DRIFT008) when the
// configuration enables the check (auditDriftOn).
const auditHelmRelease = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: redis, namespace: flux-system}\nspec: {interval: 5m}\n"

// auditDriftOn writes a configuration that enables the opt-in DRIFT008
// and returns its path.
func auditDriftOn(t *testing.T) string {
	t.Helper()
	return filepath.Join(writeTree(t, map[string]string{"c.yaml": "checks: {DRIFT008: {enabled: true}}\n"}), "c.yaml")
}

func TestAuditExitCodes(t *testing.T) {
	driftOn := auditDriftOn(t)
	clean := writeTree(t, map[string]string{"web.yaml": auditDeployment})
	warn := writeTree(t, map[string]string{"web.yaml": auditDeployment, "hr.yaml": auditHelmRelease})
	broken := writeTree(t, map[string]string{"web.yaml": auditDeployment, "bad.yaml": "kind: [unclosed\n", "notes.yaml": "\t- tab"})
	badConfig := writeTree(t, map[string]string{"web.yaml": auditDeployment, "audit.yaml": "alow: []\n"})
	twoRules := writeTree(t, map[string]string{"web.yaml": auditDeployment, "ks.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./
  sourceRef: {kind: GitRepository, name: flux-system}
  ignore:
    # the HPA owns replicas
    - paths: ["/spec/replicas"]
      target: {kind: Deployment, name: web}
    # the rollout operator pauses
    - paths: ["/spec/paused"]
      target: {kind: Deployment, name: web}
`})

	cases := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{name: "clean", args: []string{clean}, code: 0, out: "1 files, 1 manifests, 0 rules: 0 errors, 0 warnings, 0 notes"},
		{name: "drift-detection-off is opt-in", args: []string{warn, "--fail-on", "warning"}, code: 0, out: "0 errors, 0 warnings"},
		{name: "warning below default fail-on", args: []string{warn, "--config", driftOn}, code: 0, out: "DRIFT008"},
		{name: "warning at fail-on warning", args: []string{warn, "--config", driftOn, "--fail-on", "warning"}, code: 1, out: "DRIFT008"},
		{name: "fail-on never", args: []string{broken, "--fail-on", "never"}, code: 0, out: "DRIFT012"},
		{name: "bad yaml is a finding, not a crash", args: []string{broken}, code: 1, out: "bad.yaml\n  1:"},
		{name: "severity override in config", args: []string{warn, "--config", writeTree(t, map[string]string{"c.yaml": "checks: {drift-detection-off: {enabled: true, severity: error}}\n"}) + "/c.yaml"}, code: 1, out: "error   DRIFT008"},
		{name: "within --max-rules", args: []string{twoRules, "--max-rules", "2", "--fail-on", "warning"}, code: 0, out: "0 errors, 0 warnings"},
		{name: "over --max-rules", args: []string{twoRules, "--max-rules", "1", "--fail-on", "warning"}, code: 1, out: "ks.yaml\n  13:7    warning DRIFT009 2 ignore rules in total, budget 1: this is rule 2"},
		{name: "unknown output", args: []string{clean, "-o", "yaml"}, code: 2, err: `invalid -o "yaml"`},
		{name: "unknown fail-on", args: []string{clean, "--fail-on", "info"}, code: 2, err: `invalid --fail-on "info"`},
		{name: "negative budget", args: []string{clean, "--max-rules", "-1"}, code: 2, err: "invalid --max-rules"},
		{name: "missing path", args: []string{filepath.Join(clean, "nope")}, code: 2, err: "nope"},
		{name: "missing config", args: []string{clean, "--config", filepath.Join(clean, "none.yaml")}, code: 2, err: "none.yaml"},
		{name: "config with unknown key", args: []string{clean, "--config", filepath.Join(badConfig, "audit.yaml")}, code: 2, err: "alow"},
		{name: "base outside git", args: []string{clean, "--base", "HEAD~1"}, code: 2, err: "--base needs a Git checkout"},
		{name: "unknown flag", args: []string{clean, "--nope"}, code: 2, err: "unknown flag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runAudit(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out, tc.out) {
				t.Errorf("stdout does not contain %q:\n%s", tc.out, out)
			}
			if !strings.Contains(errOut, tc.err) {
				t.Errorf("stderr does not contain %q:\n%s", tc.err, errOut)
			}
			if tc.code == 2 && strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
				t.Errorf("error is not a short message:\n%s", errOut)
			}
			if strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine") {
				t.Errorf("stack trace on stderr:\n%s", errOut)
			}
		})
	}
}

func TestAuditJSONOutput(t *testing.T) {
	dir := writeTree(t, map[string]string{"web.yaml": auditDeployment, "hr.yaml": auditHelmRelease})
	code, out, _ := runAudit(t, dir, "-o", "json", "--config", auditDriftOn(t))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Kind     string
		Findings []struct {
			Check, File, Severity string
			Line                  int
		}
		Summary struct{ Manifests int }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Kind != "AuditReport" || rep.Summary.Manifests != 2 || len(rep.Findings) != 1 ||
		rep.Findings[0].Check != "DRIFT008" || rep.Findings[0].File != "hr.yaml" || rep.Findings[0].Line != 1 {
		t.Errorf("unexpected report: %+v", rep)
	}
}

func TestAuditGitHubOutputFromSubdirectory(t *testing.T) {
	dir := writeTree(t, map[string]string{"clusters/prod/hr.yaml": auditHelmRelease})
	code, out, _ := runAudit(t, filepath.Join(dir, "clusters"), "-o", "github", "--fail-on", "warning", "--config", auditDriftOn(t))
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	// Not a Git checkout: positions are relative to the working directory
	// when the path is inside it, else to the audited directory.
	if !strings.HasPrefix(out, "::warning file=") || !strings.Contains(out, "hr.yaml,line=1,col=1,title=DRIFT008 drift-detection-off::") {
		t.Errorf("unexpected annotation: %q", out)
	}
	var buf bytes.Buffer
	buf.WriteString(out)
	if strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("want one annotation line, got %q", out)
	}
}

func TestAuditBaseThroughCommand(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"manifests/web.yaml": auditDeployment,
		"flux/ks.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./manifests
  sourceRef: {kind: GitRepository, name: flux-system}
  ignore:
    - paths: ["/spec/template/spec/containers/0/image"]
      target: {kind: Deployment}
`,
	})
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	f, err := os.OpenFile(filepath.Join(dir, "flux/ks.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("    - paths: [\"/spec/replicas\"]\n      target: {kind: Deployment}\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// The base commit has an error (ignored image); the working tree only
	// adds an unjustified rule (a warning): exit 0 with the default
	// --fail-on error, 1 with --fail-on warning.
	code, out, errOut := runAudit(t, dir, "--base", "HEAD")
	if code != 0 || !strings.Contains(out, "DRIFT010 [added]") || strings.Contains(out, "DRIFT002") {
		t.Errorf("--base HEAD: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := runAudit(t, dir, "--base", "HEAD", "--fail-on", "warning"); code != 1 {
		t.Errorf("--fail-on warning: exit %d, want 1", code)
	}
	if code, _, _ := runAudit(t, dir); code != 1 {
		t.Errorf("without --base the ignored image is an error: exit %d, want 1", code)
	}
	if code, _, errOut := runAudit(t, dir, "--base", "no-such-branch"); code != 2 || !strings.Contains(errOut, "not a commit") {
		t.Errorf("unknown ref: exit %d, %s", code, errOut)
	}
}

// TestAuditExplain: audit --explain CODE prints the check's reason, an
// example and its fix without auditing anything (exit 0); an unknown
// check or a path with it is exit 2.
func TestAuditExplain(t *testing.T) {
	stdout, stderr, code, _ := run(t, KubectlFrontend, "audit", "--explain", "DRIFT002")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"DRIFT002 dangerous-target (error)", "Why:", "Example:", "Fix:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--explain DRIFT002 lacks %q:\n%s", want, stdout)
		}
	}
	if _, stderr, code, _ := run(t, KubectlFrontend, "audit", "--explain", "NOPE"); code != ExitFailure || !strings.Contains(stderr, `unknown check "NOPE"`) {
		t.Errorf("unknown check: exit %d: %s", code, stderr)
	}
	if _, _, code, _ := run(t, KubectlFrontend, "audit", "--explain", "DRIFT001", "."); code != ExitFailure {
		t.Errorf("--explain with a path: exit %d", code)
	}
}
