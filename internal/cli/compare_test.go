package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/compare"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

func testGlobals() (*GlobalOptions, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	g := &GlobalOptions{Frontend: KubectlFrontend, ConfigFlags: genericclioptions.NewConfigFlags(true), Engine: "auto",
		IOStreams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}}
	return g, out, errOut
}

func fixedInputs(in *ruleInputs) inputLoader {
	return func(context.Context, *GlobalOptions, *RuleSourceFlags) (*ruleInputs, error) { return in, nil }
}

func sampleRules() []model.Rule {
	return []model.Rule{
		{Engine: model.Engine("argocd"), Type: "argocd.ignoreDifferences", Scope: model.ScopeDiff,
			Origin: model.Origin{File: "apps/shop.yaml", Line: 20, Object: "Application argocd/shop", Field: ".spec.ignoreDifferences[0]"},
			Target: model.Selector{Group: "apps", Kind: "Deployment", Syntax: model.MatchGlob}, JSONPointers: []string{"/spec/replicas"}},
		{Engine: model.Engine("flux"), Type: "flux.kustomization.ignore", Scope: model.ScopeDiffAndApply,
			Origin: model.Origin{File: "clusters/prod/apps.yaml", Line: 14, Object: "Kustomization flux-system/shop", Field: ".spec.ignore[0]"},
			Target: model.Selector{Group: "apps", Kind: "Deployment", Syntax: model.MatchRegex}, JSONPointers: []string{"/spec/replicas"}},
	}
}

func TestCompareCommandJSON(t *testing.T) {
	g, out, _ := testGlobals()
	o := NewCompareOptions(g)
	o.load = fixedInputs(&ruleInputs{Rules: sampleRules(), Read: 2})
	cmd := newCompareCmd(o)
	cmd.SetArgs([]string{"x", "-o", "json"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	var c compare.Comparison
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if c.Summary[compare.Equivalent] != 2 || len(c.Results) != 2 {
		t.Fatalf("summary %+v", c.Summary)
	}
}

func TestCompareCommandTable(t *testing.T) {
	g, out, _ := testGlobals()
	o := NewCompareOptions(g)
	o.load = fixedInputs(&ruleInputs{Rules: sampleRules(), Read: 2})
	cmd := newCompareCmd(o)
	cmd.SetArgs([]string{"x"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ENGINE", "equivalent", "Kustomization flux-system/shop .spec.ignore[0] at clusters/prod/apps.yaml:14", "2 rule(s): 2 equivalent"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestCompareCommandProblems(t *testing.T) {
	g, _, errOut := testGlobals()
	o := NewCompareOptions(g)
	o.load = fixedInputs(&ruleInputs{Problems: []string{"bad.yaml:3: mapping values are not allowed"}})
	cmd := newCompareCmd(o)
	cmd.SetArgs([]string{"bad.yaml"})
	err := cmd.ExecuteContext(context.Background())
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitFailure {
		t.Fatalf("want exit 2 when nothing could be read, got %v", err)
	}
	if !strings.Contains(errOut.String(), "skipped bad.yaml:3") {
		t.Fatalf("problem not reported: %q", errOut)
	}
	// With something readable, the problem is a warning only.
	g, _, errOut = testGlobals()
	o = NewCompareOptions(g)
	o.load = fixedInputs(&ruleInputs{Rules: sampleRules(), Read: 2, Problems: []string{"bad.yaml:3: mapping values are not allowed"}})
	cmd = newCompareCmd(o)
	cmd.SetArgs([]string{"bad.yaml", "good.yaml"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("want success with a warning, got %v", err)
	}
	if !strings.Contains(errOut.String(), "warning: skipped bad.yaml:3") {
		t.Fatalf("problem not reported: %q", errOut)
	}
}

func TestCompareValidate(t *testing.T) {
	g, _, _ := testGlobals()
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"x"}, true},
		{[]string{}, false},
		{[]string{"x", "--to", "helm"}, false},
		{[]string{"x", "--to", "flux", "--form", "Application"}, false},
		{[]string{"x", "--to", "argocd", "--form", "argocd-cm"}, true},
		{[]string{"x", "--form", "HelmRelease"}, false},
		{[]string{"x", "-o", "wide"}, false},
	} {
		o := NewCompareOptions(g)
		o.load = fixedInputs(&ruleInputs{Read: 1})
		cmd := newCompareCmd(o)
		cmd.SetArgs(c.args)
		err := cmd.ExecuteContext(context.Background())
		if (err == nil) != c.ok {
			t.Errorf("%v: err=%v", c.args, err)
		}
	}
}

func TestRulesCommandEngineFilter(t *testing.T) {
	g, out, _ := testGlobals()
	g.Engine = "flux"
	o := NewRulesOptions(g)
	o.load = fixedInputs(&ruleInputs{Rules: sampleRules(), Read: 2})
	cmd := newRulesCmd(o)
	cmd.SetArgs([]string{"x", "-o", "yaml"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "argocd") || !strings.Contains(out.String(), "engine: flux") {
		t.Fatalf("engine filter:\n%s", out)
	}
}

func TestNormalizeDiff(t *testing.T) {
	dir := t.TempDir()
	live := `apiVersion: v1
kind: Secret
metadata: {name: db, namespace: shop}
data: {password: c2VjcmV0, user: YWRtaW4=}
`
	desired := `apiVersion: v1
kind: Secret
metadata: {name: db, namespace: shop}
data: {password: b3RoZXI=, user: YWRtaW4=}
`
	lf, df := filepath.Join(dir, "live.yaml"), filepath.Join(dir, "desired.yaml")
	if err := os.WriteFile(lf, []byte(live), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(df, []byte(desired), 0o600); err != nil {
		t.Fatal(err)
	}
	g, out, _ := testGlobals()
	g.Engine = "flux"
	o := NewNormalizeOptions(g)
	o.getenv = func(string) string { return "" }
	o.load = func(context.Context, *GlobalOptions, *RuleSourceFlags, model.Reader) ([]model.Adapter, error) {
		return []model.Adapter{identityAdapter{"flux"}}, nil
	}
	cmd := newNormalizeCmd(o)
	cmd.SetArgs([]string{"-f", lf, "--diff", "-f", df})
	err := cmd.ExecuteContext(context.Background())
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitDrift {
		t.Fatalf("want exit 1, got %v", err)
	}
	s := out.String()
	if strings.Contains(s, "c2VjcmV0") || strings.Contains(s, "b3RoZXI=") || strings.Contains(s, "YWRtaW4=") {
		t.Fatalf("secret value printed:\n%s", s)
	}
	for _, want := range []string{"--- LIVE/v1.Secret.shop.db", "+++ MERGED/v1.Secret.shop.db", "-  password: '*** (before)'", "+  password: '*** (after)'", "   user: '***'"} {
		if !strings.Contains(s, want) {
			t.Errorf("diff lacks %q:\n%s", want, s)
		}
	}

	// KUBECTL_EXTERNAL_DIFF gets two directories, like kubectl diff.
	g, out, _ = testGlobals()
	g.Engine = "flux"
	o2 := NewNormalizeOptions(g)
	o2.load = o.load
	o2.getenv = func(k string) string {
		if k == "KUBECTL_EXTERNAL_DIFF" {
			return "diff -r -u"
		}
		return ""
	}
	cmd = newNormalizeCmd(o2)
	cmd.SetArgs([]string{"-f", lf, "--diff", "-f", df})
	err = cmd.ExecuteContext(context.Background())
	if !errors.As(err, &ee) || ee.Code != ExitDrift {
		t.Fatalf("external diff: want exit 1, got %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "LIVE/v1.Secret.shop.db") || strings.Contains(out.String(), "c2VjcmV0") {
		t.Fatalf("external diff output:\n%s", out)
	}
}

func TestUnifiedDiffHunks(t *testing.T) {
	var a, b []string
	for i := 0; i < 20; i++ {
		a = append(a, "line"+string(rune('a'+i)))
	}
	b = append(b, a...)
	b[2] = "changed"
	b[15] = "other"
	got := unifiedDiff("a", "b", strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n", 3)
	want := `--- a
+++ b
@@ -1,6 +1,6 @@
 linea
 lineb
-linec
+changed
 lined
 linee
 linef
@@ -13,7 +13,7 @@
 linem
 linen
 lineo
-linep
+other
 lineq
 liner
 lines
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// identityAdapter normalizes nothing: the tests see normalize's own work.
type identityAdapter struct{ engine model.Engine }

func (a identityAdapter) Engine() model.Engine                        { return a.engine }
func (identityAdapter) Owner(*unstructured.Unstructured) *model.Owner { return nil }
func (identityAdapter) Judge(context.Context, model.JudgeInput) error { return nil }
func (identityAdapter) Rules(context.Context) ([]model.Rule, error)   { return nil, nil }
func (identityAdapter) Normalize(_ context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return obj.DeepCopy(), nil
}

// normalize --engine auto asks the engines' adapters who owns the object
// (their marks, with their settings), not label names of its own.
func TestPickEngine(t *testing.T) {
	mk := func(ann, labels map[string]string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop"}}}
		o.SetAnnotations(ann)
		o.SetLabels(labels)
		return o
	}
	argo := mk(map[string]string{"argocd.argoproj.io/tracking-id": "shop:apps/Deployment:shop/web"}, nil)
	fl := mk(nil, map[string]string{"kustomize.toolkit.fluxcd.io/name": "shop", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"})
	both := mk(argo.GetAnnotations(), fl.GetLabels())
	none := mk(nil, nil)
	g, _, _ := testGlobals()
	for _, c := range []struct {
		engine string
		obj    *unstructured.Unstructured
		want   string
	}{
		{"auto", argo, "argocd"}, {"auto", fl, "flux"}, {"auto", both, ""}, {"auto", none, ""}, {"flux", argo, "flux"},
	} {
		g.Engine = c.engine
		adapters, err := defaultNormalizerLoader(context.Background(), g, &RuleSourceFlags{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := drift.PickAdapter(c.engine, adapters, c.obj)
		got := ""
		if a != nil {
			got = string(a.Engine())
		}
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("%s %v: %q %v, want %q", c.engine, c.obj.GetAnnotations(), got, err, c.want)
		}
	}
}

// One -o vocabulary (issue 12): text and table name the same human view in
// every command that has one, and a bad value is reported with the same words.
func TestOutputVocabulary(t *testing.T) {
	for _, c := range []struct {
		value   string
		formats []string
		want    string
		err     string
	}{
		{"text", tableFormats, "table", ""},
		{"table", []string{"text", "json"}, "text", ""},
		{"json", tableFormats, "json", ""},
		{"wide", tableFormats, "", `invalid -o "wide": must be one of table, json, yaml`},
		{"text", []string{"yaml", "json"}, "", `invalid -o "text": must be one of yaml, json`},
	} {
		got, err := canonicalOutput(c.value, c.formats)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("canonicalOutput(%q, %v) = %q, %v; want %q, %q", c.value, c.formats, got, err, c.want, c.err)
		}
	}
	for _, cmd := range []string{"explain", "scan", "rules", "compare", "normalize", "audit"} {
		stdout, _, _, _ := run(t, KubectlFrontend, cmd, "--help")
		if !strings.Contains(stdout, "-o, --output") || !strings.Contains(stdout, "Output format: ") {
			t.Errorf("%s --help does not document -o with the shared wording", cmd)
		}
	}
}
