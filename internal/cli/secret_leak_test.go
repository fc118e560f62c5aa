package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// leakMarker is in every value of the test Secret: data (base64),
// stringData (plain) and last-applied-configuration (both). No output may
// contain it, raw or base64-encoded. Values stay under gojq's 30-byte
// preview so that a jq error would quote them whole.
const leakMarker = "QZXJWMARK"

// markerForms are the strings whose presence in output is a leak: the
// marker itself, the exact base64 values of the Secret, and the part of
// the marker's base64 encoding that does not depend on what precedes it,
// at each of base64's three alignments (so a longer value holding the
// marker is caught too).
func markerForms(values ...string) []string {
	forms := []string{leakMarker}
	for _, v := range values {
		forms = append(forms, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	for pad := 0; pad < 3; pad++ {
		enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", pad) + leakMarker))
		skip := (pad*4 + 2) / 3 // characters that mix in the padding
		forms = append(forms, enc[skip+1:len(enc)-4])
	}
	return forms
}

func leaks(s string, forms []string) []string {
	var found []string
	for _, f := range forms {
		if strings.Contains(s, f) {
			found = append(found, f)
		}
	}
	return found
}

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
	m := leakMarker
	liveToken, livePW, desiredPW, laPW := "live-"+m+"-t", "pw-"+m, "desired-"+m, "la-"+m
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	lastApplied := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"shop"},"stringData":{"password":%q},"data":{"token":%q}}`, laPW, b64(liveToken))
	live := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  annotations:
    argocd.argoproj.io/tracking-id: shop:/Secret:shop/db
    kubectl.kubernetes.io/last-applied-configuration: '%s'
  labels:
    kustomize.toolkit.fluxcd.io/name: shop
    kustomize.toolkit.fluxcd.io/namespace: flux-system
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data:
        .: {}
        f:password: {}
        f:token: {}
      f:metadata:
        f:annotations:
          .: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
      f:type: {}
    manager: argocd-controller
    operation: Update
    time: "2026-01-01T00:00:00Z"
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data:
        f:token: {}
    manager: kubectl-edit
    operation: Update
    time: "2026-01-02T00:00:00Z"
type: Opaque
data:
  token: %s
  password: %s
`, lastApplied, b64(liveToken), b64(livePW))
	desired := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
type: Opaque
stringData:
  password: %s
data:
  token: %s
`, desiredPW, b64("desired-"+m+"-t"))
	jq := []string{
		`.data[]`,
		`.data | keys[0] | .[]`,
		`.data.token | .[]`,
		`.stringData.password | .[]`,
		`.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] | .[]`,
		`.data.password | error`,
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
		live:    testutil.WriteFile(t, root, "live.yaml", live),
		desired: testutil.WriteFile(t, root, "desired.yaml", desired),
		rules:   map[string]string{},
		forms:   markerForms(liveToken, livePW, desiredPW, laPW, "desired-"+m+"-t"),
	}
	for kind, content := range rules {
		dir := filepath.Join(root, kind)
		testutil.WriteFile(t, dir, "rules.yaml", content)
		testutil.WriteFile(t, dir, "secret-live.yaml", live)
		testutil.WriteFile(t, dir, "secret-desired.yaml", desired)
		f.rules[kind] = dir
	}
	// The detector must see the values in the inputs, or the test proves
	// nothing.
	for _, in := range []string{live, desired} {
		if len(leaks(in, f.forms)) == 0 {
			t.Fatalf("marker forms %v not found in the fixture itself", f.forms)
		}
	}
	return f
}

// runCommand runs the kubectl door in process the way Main does: stdin
// from stdin, exit code from the returned error.
func runCommand(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	streams, in, out, errOut := genericiooptions.NewTestIOStreams()
	in.WriteString(stdin)
	root := NewRootCommand(KubectlFrontend, streams)
	root.SetArgs(args)
	code := exitCode(root.ExecuteContext(context.Background()), streams)
	return code, out.String(), errOut.String()
}

// runCommandTo runs the kubectl door with stdout going to out and no stdin.
func runCommandTo(tb testing.TB, out io.Writer, args ...string) (int, string, string) {
	tb.Helper()
	var errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: &errOut}
	root := NewRootCommand(KubectlFrontend, streams)
	root.SetArgs(args)
	code := exitCode(root.ExecuteContext(context.Background()), streams)
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
			if l := leaks(out, f.forms); len(l) > 0 {
				t.Errorf("stdout leaks %q:\n%s", l, out)
			}
			if l := leaks(errOut, f.forms); len(l) > 0 {
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

// TestSecretMarkerDetectorCatchesLeaks guards the detector itself: each
// form a leak can take is found.
func TestSecretMarkerDetectorCatchesLeaks(t *testing.T) {
	forms := markerForms("pw-" + leakMarker)
	for _, s := range []string{
		"x " + leakMarker,
		base64.StdEncoding.EncodeToString([]byte("pw-" + leakMarker)),
		base64.StdEncoding.EncodeToString([]byte("a longer prefix " + leakMarker + " and suffix")),
		base64.StdEncoding.EncodeToString([]byte("ab" + leakMarker)),
		base64.StdEncoding.EncodeToString([]byte("abc" + leakMarker)),
	} {
		if len(leaks(s, forms)) == 0 {
			t.Errorf("leak not detected in %q", s)
		}
	}
	if l := leaks(string(bytes.Repeat([]byte("*** "), 10)), forms); len(l) > 0 {
		t.Errorf("masked text reported as a leak: %v", l)
	}
}
