package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// secretFixture writes the Secret (live with managedFields, desired) and
// one directory of rules per rule kind, each also holding both Secrets
// (rules, compare and audit read objects from the same directories).
type secretFixture struct {
	live, desired string
	rules         map[string]string // rule kind -> directory
	forms         []string
}

func newSecretFixture(t *testing.T) *secretFixture {
	t.Helper()
	secret := testutil.NewMarkedSecret(t)
	// Argo CD runs them in order on what the ones before left: the rules
	// that fail come before `.data[]`, which removes every value.
	jq := []string{
		// gojq's wrap errors ("NAME cannot be applied to PREVIEW: ...")
		// on the value as stored, decoded and transformed (issue 29);
		// cert is longer than the preview.
		`.data[] | select(tonumber > 0)`,
		`.data.cert | select(@base64d | fromjson)`,
		`.data.cert | select(@base64d | ascii_downcase | tonumber)`,
		`.data.cert | select(@base64d | ("x" + .) | tonumber)`,
		`.data.password | select(@base64d | strptime("%Y"))`,
		`.stringData.password | select(ascii_downcase | tonumber)`,
		`.data | keys[0] | .[]`,
		`.data.token | .[]`,
		`.stringData.password | .[]`,
		`.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] | .[]`,
		`.data.password | error`,
		`.data[]`,
	}
	quoted := func(xs []string) string {
		var b strings.Builder
		for _, x := range xs {
			fmt.Fprintf(&b, "\n    - %q", x)
		}
		return b.String()
	}
	app := func(field string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://example.com/shop.git, path: shop}
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  syncPolicy: {automated: {selfHeal: true}}
  ignoreDifferences:
  - kind: Secret
    ` + field + "\n"
	}
	rules := map[string]string{
		"jsonPointers":      app("jsonPointers:" + quoted([]string{"/data/password", "/stringData/password", "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"})),
		"jqPathExpressions": app("jqPathExpressions:" + quoted(jq)),
		"argocd-cm-jq": `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd, labels: {app.kubernetes.io/part-of: argocd}}
data:
  resource.customizations.ignoreDifferences.Secret: |
    jqPathExpressions:` + strings.ReplaceAll(quoted(jq), "\n    ", "\n    ") + "\n",
		"managedFieldsManagers": app("managedFieldsManagers:" + quoted([]string{"kubectl-edit"})),
		"flux-ignore": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: shop, namespace: flux-system}
spec:
  interval: 10m
  path: ./shop
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  ignore:
  - paths: ["/data/password", "/stringData/password", "/metadata/annotations"]
    target: {kind: Secret}
`,
	}
	root := t.TempDir()
	f := &secretFixture{
		live:    testutil.WriteFile(t, root, "live.yaml", secret.Live),
		desired: testutil.WriteFile(t, root, "desired.yaml", secret.Desired),
		rules:   map[string]string{},
		forms:   secret.Forms,
	}
	for kind, content := range rules {
		dir := filepath.Join(root, kind)
		testutil.WriteFile(t, dir, "rules.yaml", content)
		testutil.WriteFile(t, dir, "secret-live.yaml", secret.Live)
		testutil.WriteFile(t, dir, "secret-desired.yaml", secret.Desired)
		f.rules[kind] = dir
	}
	return f
}

// runCommand runs the kubectl door in process the way Main does: stdin
// from stdin, exit code from the returned error.
func runCommand(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	streams, in, out, errOut := genericiooptions.NewTestIOStreams()
	in.WriteString(stdin)
	code := Run(context.Background(), KubectlFrontend, streams, args)
	return code, out.String(), errOut.String()
}

// runCommandTo runs the kubectl door with stdout going to out and no stdin.
func runCommandTo(tb testing.TB, out io.Writer, args ...string) (int, string, string) {
	tb.Helper()
	var errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: &errOut}
	code := Run(context.Background(), KubectlFrontend, streams, args)
	return code, "", errOut.String()
}

// TestSecretValuesNeverLeak feeds a Secret carrying a marker in data,
// stringData and last-applied-configuration through every command that
// can read one, in every output format, with every rule kind (including
// jq expressions that fail on the Secret's values, whose gojq errors quote
// them), and fails if the marker reaches stdout or stderr in any encoding.
func TestSecretValuesNeverLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~200 commands")
	}
	f := newSecretFixture(t)
	liveBytes, err := os.ReadFile(f.live)
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		name  string
		stdin string
		args  []string
		// externalDiff sets KUBECTL_EXTERNAL_DIFF.
		externalDiff string
	}
	var runs []run
	for kind, dir := range f.rules {
		rulesFile := filepath.Join(dir, "rules.yaml")
		add := func(name, stdin string, args ...string) {
			runs = append(runs, run{name: kind + "/" + name, stdin: stdin, args: args})
		}
		for _, o := range []string{"text", "json", "yaml"} {
			add("explain-inferred-"+o, "", "explain", "--live-file", f.live, "--rules", rulesFile, "-o", o)
			add("explain-file-"+o, "", "explain", "--live-file", f.live, "-f", f.desired, "--rules", rulesFile, "-o", o)
			add("explain-stdin-live-"+o, string(liveBytes), "explain", "secret/db", "--live-file", "-", "-f", f.desired, "--rules", rulesFile, "-o", o)
			for _, e := range []string{"argocd", "flux"} {
				add("explain-"+e+"-"+o, "", "explain", "--engine", e, "--live-file", f.live, "-f", f.desired, "--rules", rulesFile, "-o", o)
			}
		}
		for _, e := range []string{"argocd", "flux"} {
			for _, o := range []string{"yaml", "json"} {
				add("normalize-"+e+"-"+o, "", "normalize", "-f", f.live, "--engine", e, "--rules", rulesFile, "-o", o)
				add("normalize-desired-"+e+"-"+o, "", "normalize", "-f", f.desired, "--engine", e, "--rules", rulesFile, "-o", o)
			}
			add("normalize-diff-"+e, "", "normalize", "-f", f.live, "--engine", e, "--rules", rulesFile, "--diff", "-f", f.desired)
			add("normalize-diff-full-"+e, "", "normalize", "-f", f.live, "--engine", e, "--rules", rulesFile, "--diff", "--full", "-f", f.desired)
			runs = append(runs, run{name: kind + "/normalize-external-diff-" + e, externalDiff: "diff -u",
				args: []string{"normalize", "-f", f.live, "--engine", e, "--rules", rulesFile, "--diff", "--full", "-f", f.desired}})
		}
		for _, o := range []string{"table", "json", "yaml"} {
			add("rules-"+o, "", "rules", dir, "-o", o)
			add("compare-"+o, "", "compare", dir, "-o", o)
		}
		add("compare-to-flux", "", "compare", dir, "--to", "flux")
		add("compare-to-argocd", "", "compare", dir, "--to", "argocd")
		for _, o := range []string{"text", "json", "sarif", "github"} {
			add("audit-"+o, "", "audit", dir, "-o", o)
		}
	}
	jqErrorsSeen := 0
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			if r.externalDiff != "" {
				t.Setenv("KUBECTL_EXTERNAL_DIFF", r.externalDiff)
			}
			code, out, errOut := runCommand(t, r.stdin, r.args...)
			if code != ExitNoDrift && code != ExitDrift {
				t.Fatalf("exit %d, want 0 or 1 (a failing command proves nothing)\nstderr: %s", code, errOut)
			}
			// normalize --diff prints nothing when the sides agree, and
			// compare --to nothing when no rule translates.
			mayBeEmpty := strings.Contains(r.name, "normalize-diff") || strings.Contains(r.name, "compare-to") || r.externalDiff != ""
			if strings.TrimSpace(out) == "" && !mayBeEmpty {
				t.Fatalf("no output\nstderr: %s", errOut)
			}
			if l := testutil.Leaks(out, f.forms); len(l) > 0 {
				t.Errorf("stdout leaks %q:\n%s", l, out)
			}
			if l := testutil.Leaks(errOut, f.forms); len(l) > 0 {
				t.Errorf("stderr leaks %q:\n%s", l, errOut)
			}
			if strings.Contains(out, "cannot iterate over") {
				jqErrorsSeen++
			}
		})
	}
	// The failing jq rules must really have failed on the Secret in some
	// runs, or the jq error path went untested.
	if jqErrorsSeen == 0 {
		t.Error("no run reported a jq error: the failing-jq rules were not exercised")
	}
}
