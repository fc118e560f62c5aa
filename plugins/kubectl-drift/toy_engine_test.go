package main

// The toy engine of internal/enginetest, registered in this test binary
// only, in every command of the kubectl door. The test lives with the
// binary's main because only plugins/ may import internal/cli
// (hack/verify-imports.sh), and internal/cli may import no engine.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/cli"
	// The one registration line: the toy engine joins Argo CD and Flux.
	_ "github.com/kubectl-drift/kubectl-drift/internal/enginetest"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// testdata/configmap-web-live.yaml (internal/enginetest) was saved from the real API server of
// hack/cluster.sh (kubectl get -o yaml --show-managed-fields) after
// `kubectl apply --server-side --field-manager toy-controller -f
// configmap-web-desired.yaml`, `kubectl label cm web team=payments
// hotfix=1 --overwrite` and `kubectl patch cm web` (data.mode): its
// managedFields are the server's.
const (
	testdata = "../../internal/enginetest/testdata"
	live     = testdata + "/configmap-web-live.yaml"
	desired  = testdata + "/configmap-web-desired.yaml"
	rules    = testdata + "/toyapp-web.yaml"
)

// run runs one command line through the same root command the binaries
// build, in process.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Run(context.Background(), cli.KubectlFrontend, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), code
}

// runJSON runs a command line that must exit 0 and decodes its JSON output
// into v; it returns the output for messages.
func runJSON(t *testing.T, v any, args ...string) string {
	t.Helper()
	stdout, stderr, code := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	return stdout
}

// verdicts maps each drifted field to the toy engine's verdict.
func verdicts(t *testing.T, r model.Report) map[string]model.VerdictKind {
	t.Helper()
	out := map[string]model.VerdictKind{}
	for _, d := range r.Drifts {
		for _, v := range d.Verdicts {
			if v.Engine == "toy" {
				out[d.Path] = v.Kind
			}
		}
	}
	return out
}

func TestToyEngineInExplain(t *testing.T) {
	want := map[string]model.VerdictKind{
		"/metadata/labels/hotfix": model.Reverted,  // a label: the toy engine reverts it
		"/metadata/labels/team":   model.Ignored,   // its ToyApp's ignoreLabels
		"/data/mode":              model.LeftAlone, // not a label
	}
	for _, tc := range []struct {
		name string
		args []string
		src  model.DesiredSource
	}{
		{"inferred", nil, model.SourceManagedFields},
		{"file", []string{"-f", desired}, model.SourceFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, eng := range []string{"auto", "toy"} {
				args := append([]string{"explain", "--engine", eng, "--live-file", live, "--rules", rules, "-o", "json"}, tc.args...)
				stdout, stderr, code := run(t, args...)
				if code != cli.ExitDrift {
					t.Fatalf("--engine %s: exit %d, want 1 (a reverted label)\n%s%s", eng, code, stdout, stderr)
				}
				var r model.Report
				if err := json.Unmarshal([]byte(stdout), &r); err != nil {
					t.Fatalf("%v\n%s", err, stdout)
				}
				if r.DesiredSource != tc.src || len(r.Owners) != 1 || r.Owners[0].Engine != "toy" || r.Owners[0].Kind != "ToyApp" || r.Owners[0].Name != "web" {
					t.Errorf("--engine %s: source %s, owners %+v; want the ToyApp web", eng, r.DesiredSource, r.Owners)
				}
				got := verdicts(t, r)
				for p, v := range want {
					if got[p] != v {
						t.Errorf("--engine %s: %s: verdict %q, want %q (all: %v)", eng, p, got[p], v, got)
					}
				}
				if strings.Contains(stderr, "warning") {
					t.Errorf("--engine %s: unexpected warning: %s", eng, stderr)
				}
			}
		})
	}
	// Leaving the toy engine out still names the owner, not judged.
	stdout, _, _ := run(t, "explain", "--engine", "flux", "--live-file", live, "-o", "json")
	var r model.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(r.Owners) != 1 || r.Owners[0].Engine != "toy" || !r.Owners[0].NotJudged {
		t.Errorf("--engine flux: owners %+v; want the toy owner, not judged", r.Owners)
	}
}

func TestToyEngineIsAnEngineValue(t *testing.T) {
	stdout, _, _ := run(t, "__complete", "explain", "--engine", "")
	for _, e := range []string{"auto", "argocd", "flux", "toy"} {
		if !strings.Contains(stdout, e+"\n") {
			t.Errorf("--engine completion lacks %s:\n%s", e, stdout)
		}
	}
	stdout, _, _ = run(t, "--help")
	if !strings.Contains(stdout, "auto, argocd, flux or toy") {
		t.Errorf("--engine help does not list toy:\n%s", stdout)
	}
	if _, stderr, code := run(t, "rules", "--engine", "jenkins", rules); code != cli.ExitFailure || !strings.Contains(stderr, "auto, argocd, flux or toy") {
		t.Errorf("bad --engine: exit %d, %s", code, stderr)
	}
}

func TestToyEngineInRules(t *testing.T) {
	var list struct{ Items []model.Rule }
	runJSON(t, &list, "rules", "--engine", "toy", rules, "-o", "json")
	if len(list.Items) != 1 {
		t.Fatalf("rules: %+v, want the one ignoreLabels entry", list.Items)
	}
	r := list.Items[0]
	if r.Engine != "toy" || r.Type != "toy.ignoreLabel" || r.Origin.File != rules || r.Origin.Line == 0 || r.JSONPointers[0] != "/metadata/labels/team" {
		t.Errorf("rule %+v", r)
	}
	// The table names the engine too.
	stdout, _, _ := run(t, "rules", rules)
	if !strings.Contains(stdout, "toy") || !strings.Contains(stdout, "toy.ignoreLabel") {
		t.Errorf("rules table:\n%s", stdout)
	}
}

func TestToyEngineInCompare(t *testing.T) {
	var c struct {
		Results []struct {
			Rule   model.Rule
			Status string
		}
	}
	runJSON(t, &c, "compare", rules, "-o", "json")
	if len(c.Results) != 1 || c.Results[0].Rule.Engine != "toy" || c.Results[0].Status == "" {
		t.Errorf("compare results %+v; want the toy rule with a status", c.Results)
	}
}

// TestToyEngineIsACompareSide: compare is N-way over the registry: a Flux
// rule ignoring the label the ToyApp ignores is the toy rule's counterpart
// (and the other way round), and the toy engine has its own column in the
// effect table.
func TestToyEngineIsACompareSide(t *testing.T) {
	ks := filepath.Join(t.TempDir(), "kustomization.yaml")
	if err := os.WriteFile(ks, []byte(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: web, namespace: flux-system}
spec:
  ignore:
  - paths: ["/metadata/labels/team"]
    target: {kind: ConfigMap, name: web}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var c struct {
		Results []struct {
			Rule         model.Rule
			Status       string
			Counterparts []struct{ Engine model.Engine }
		}
	}
	stdout := runJSON(t, &c, "compare", rules, ks, "-o", "json")
	got := map[model.Engine]model.Engine{}
	for _, r := range c.Results {
		if len(r.Counterparts) == 1 {
			got[r.Rule.Engine] = r.Counterparts[0].Engine
		}
	}
	if got["toy"] != "flux" || got["flux"] != "toy" || len(c.Results) != 2 {
		t.Errorf("counterparts %v in %s; want toy <-> flux", got, stdout)
	}
	stdout, stderr, code := run(t, "compare", rules, ks, live)
	if code != 0 || !strings.Contains(stdout, "IGNORED BY TOY ONLY") || !strings.Contains(stdout, "IGNORED BY FLUX ONLY") {
		t.Errorf("effect table: exit %d\n%s%s", code, stdout, stderr)
	}
	// The toy engine has no translator: --to lists the engines that have.
	_, stderr, code = run(t, "compare", ks, "--to", "toy")
	if code != cli.ExitFailure || !strings.Contains(stderr, `invalid --to "toy": must be argocd or flux`) {
		t.Errorf("--to toy: exit %d: %s", code, stderr)
	}
}

func TestToyEngineInNormalize(t *testing.T) {
	// --engine auto picks the toy engine: its adapter owns the object.
	stdout, stderr, code := run(t, "normalize", "-f", live, "--rules", rules, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, `"team"`) || !strings.Contains(stdout, `"hotfix"`) {
		t.Errorf("normalize kept the ignored label or dropped another:\n%s", stdout)
	}
	// --diff: the ignored label is gone from both sides; the fields the
	// desired state sets differ; --full also shows the live-only label.
	stdout, stderr, code = run(t, "normalize", "-f", live, "--rules", rules, "--diff", "-f", desired)
	if code != cli.ExitDrift || strings.Contains(stdout, "team") || !strings.Contains(stdout, "-  mode: green") || strings.Contains(stdout, "hotfix") {
		t.Errorf("normalize --diff: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, "normalize", "-f", live, "--rules", rules, "--diff", "--full", "-f", desired)
	if code != cli.ExitDrift || strings.Contains(stdout, " team: ") || !strings.Contains(stdout, "-    hotfix") {
		t.Errorf("normalize --diff --full: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestToyEngineInAudit(t *testing.T) {
	// The toy engine reports under DRIFT008, which is opt-in.
	cfg := filepath.Join(t.TempDir(), "audit.yaml")
	if err := os.WriteFile(cfg, []byte("checks: {DRIFT008: {enabled: true}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, "audit", testdata, "-o", "json", "--fail-on", "never", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Summary  struct{ Rules int }
		Findings []struct {
			Check, Message, Hint, File, Object, Field string
			Engine                                    model.Engine
			Line, Column                              int
		}
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if res.Summary.Rules != 1 {
		t.Errorf("audit counted %d rules, want the toy rule\n%s", res.Summary.Rules, stdout)
	}
	// The toy engine's own check (Descriptor.Audit), through the same
	// catalogue, positions and printers as every check.
	var found bool
	for _, f := range res.Findings {
		if f.Engine != "toy" {
			continue
		}
		if f.Check != "DRIFT008" || !strings.HasSuffix(f.File, "toyapp-batch-suspended.yaml") || f.Line != 9 || f.Column != 3 ||
			f.Object != "ToyApp toy-shop/batch" || f.Field != ".spec.suspend" || !strings.Contains(f.Message, "suspended") ||
			!strings.Contains(f.Hint, "spec.suspend") {
			t.Errorf("unexpected toy finding %+v", f)
		}
		found = true
	}
	if !found {
		t.Errorf("audit did not report the suspended ToyApp (DRIFT008)\n%s", stdout)
	}
	stdout, _, code = run(t, "audit", testdata, "--fail-on", "warning", "--config", cfg)
	if code != cli.ExitDrift || !strings.Contains(stdout, "DRIFT008 ToyApp toy-shop/batch is suspended") {
		t.Errorf("audit --fail-on warning: exit %d, want %d\n%s", code, cli.ExitDrift, stdout)
	}
}

// TestToyEngineInSuggest: a label a controller wrote (testdata/
// configmap-web-operator-live.yaml, saved from the real API server after
// the server-side apply above and `kubectl label cm web hotfix=1
// --field-manager=label-operator`) gets the toy engine's rule, a
// spec.ignoreLabels entry in the ToyApp, checked by the toy engine's own
// judge; the other engines' rules are suggested beside it.
func TestToyEngineInSuggest(t *testing.T) {
	opLive := testdata + "/configmap-web-operator-live.yaml"
	stdout, stderr, code := run(t, "suggest", "cm/web", "--live-file", opLive, "-f", desired, "--rules", rules, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var list struct {
		Items []struct {
			Path   string
			Toy    struct{ IgnoreLabel string }
			Checks []struct {
				Engine  string
				Verdict model.VerdictKind
				OK      bool
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(list.Items) != 1 || list.Items[0].Path != "/metadata/labels/hotfix" || list.Items[0].Toy.IgnoreLabel != "hotfix" {
		t.Fatalf("want the toy rule ignoring the operator's label hotfix:\n%s", stdout)
	}
	if c := list.Items[0].Checks; len(c) != 1 || c[0].Engine != "toy" || c[0].Verdict != model.Ignored || !c[0].OK {
		t.Errorf("checks %+v, want the ToyApp with the rule to ignore the label", c)
	}
	for _, key := range []string{`"argocd":`, `"flux":`} {
		if !strings.Contains(stdout, key) {
			t.Errorf("no %s rule beside the toy one:\n%s", key, stdout)
		}
	}
	stdout, _, _ = run(t, "suggest", "cm/web", "--live-file", opLive, "-f", desired, "--rules", rules)
	want := `  Toy, add to the ToyApp toy-shop/web:
    spec:
      ignoreLabels:
        # label-operator (operator) owns .metadata.labels.hotfix of ConfigMap web
        - hotfix
`
	if !strings.Contains(stdout, want) || !strings.Contains(stdout, "checked: ToyApp toy-shop/web with the rule: toy verdict ignored; audit: no finding -> ok") {
		t.Errorf("text output lacks the toy rule and its check:\n%s", stdout)
	}
}
