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

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/compare"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
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

// The corpus lives with the comparison engine: an Argo CD app-of-apps repo
// with argocd-cm customizations and an ApplicationSet, a Flux repo with
// Kustomizations and a HelmRelease (and one broken file), and plain
// manifests for comparing by effect.
var corpusDir = func() string {
	abs, err := filepath.Abs("../compare/testdata")
	if err != nil {
		panic(err)
	}
	return abs
}()

// inCorpus runs a command with the corpus as working directory, so that
// file names in the output are stable, and returns stdout, stderr and err.
func inCorpus(t *testing.T, build func(g *GlobalOptions) *cobra.Command, args ...string) (string, string, error) {
	t.Helper()
	t.Chdir(corpusDir)
	g, out, errOut := testGlobals()
	cmd := build(g)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func compareGolden(t *testing.T, goldenPath, got string) {
	t.Helper()
	testutil.Golden(t, goldenPath, []byte(got))
}

var goldenDir = func() string {
	abs, err := filepath.Abs(filepath.Join("testdata", "compare"))
	if err != nil {
		panic(err)
	}
	return abs
}()

func goldenPath(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(goldenDir, name+".golden")
}

// TestCompareCorpusClassification asserts the status of every rule of the
// corpus, and the reason of every untranslatable case the issue names.
func TestCompareCorpusClassification(t *testing.T) {
	gp := goldenPath(t, "corpus-compare-json")
	out, errOut, err := inCorpus(t, newCompareCommand, "argocd-app-of-apps", "flux-repo", "manifests", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	// The broken file is reported with file:line and skipped.
	if !strings.Contains(errOut, "warning: skipped flux-repo/apps/shop/broken.yaml:6:") {
		t.Errorf("broken file not reported with file:line: %q", errOut)
	}
	var c compare.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	type want struct {
		status compare.Status
		reason string // substring of a reason, "" for none checked
	}
	expect := map[string]want{
		// Argo CD app-of-apps
		"Application argocd/platform .spec.ignoreDifferences[0]":                                                                   {compare.Partial, "iterates over every array item"},
		"Application argocd/platform .spec.ignoreDifferences[1]":                                                                   {compare.Partial, ""},
		"Application argocd/platform .spec.ignoreDifferences[2]":                                                                   {compare.Partial, ""},
		"Application argocd/shop .spec.ignoreDifferences[0]":                                                                       {compare.Equivalent, ""},
		"Application argocd/shop .spec.ignoreDifferences[1]":                                                                       {compare.Untranslatable, "managedFieldsManagers has no Flux equivalent: Flux field ownership already does this"},
		"Application argocd/shop .spec.ignoreDifferences[2]":                                                                       {compare.Untranslatable, "selects array items by value"},
		"Application argocd/shop .spec.ignoreDifferences[3]":                                                                       {compare.Partial, ""},
		"Application argocd/shop .spec.ignoreDifferences[4]":                                                                       {compare.Equivalent, ""},
		"Application argocd/shop .spec.ignoreDifferences[5]":                                                                       {compare.Partial, ""},
		"ApplicationSet argocd/monitoring .spec.template.spec.ignoreDifferences[0]":                                                {compare.Only(model.Engine("argocd")), ""},
		"ConfigMap argocd/argocd-cm data[resource.compareoptions].ignoreResourceStatusField (default all)":                         {compare.Untranslatable, "resource.compareoptions"},
		"ConfigMap argocd/argocd-cm data[resource.customizations.ignoreDifferences.apps_Deployment]":                               {compare.Equivalent, ""},
		"ConfigMap argocd/argocd-cm data[resource.customizations.ignoreDifferences.all]":                                           {compare.Equivalent, ""},
		"ConfigMap argocd/argocd-cm data[resource.customizations.ignoreDifferences.apiextensions.k8s.io_CustomResourceDefinition]": {compare.Only(model.Engine("argocd")), ""},
		"ConfigMap argocd/argocd-cm data[resource.exclusions][0]":                                                                  {compare.Untranslatable, "Flux has no discovery exclusion"},
		// Flux repo
		"HelmRelease podinfo/podinfo .spec.driftDetection.ignore[0]":                 {compare.Partial, ""},
		"HelmRelease podinfo/podinfo .spec.driftDetection.ignore[1]":                 {compare.Untranslatable, "Argo CD matches names exactly"},
		"HelmRelease podinfo/podinfo .spec.driftDetection.ignore[2]":                 {compare.Partial, "whole object"},
		"Deployment shop/web .metadata.annotations[kustomize.toolkit.fluxcd.io/ssa]": {compare.Untranslatable, "ssa: Merge"},
		"Kustomization flux-system/shop .spec.ignore[0]":                             {compare.Equivalent, ""},
		"Kustomization flux-system/shop .spec.ignore[1]":                             {compare.Equivalent, ""},
		"Kustomization flux-system/shop .spec.ignore[2]":                             {compare.Partial, ""},
		"Kustomization flux-system/shop .spec.ignore[3]":                             {compare.Untranslatable, "cannot select objects by labels"},
		"Kustomization flux-system/shop .spec.ignore[4]":                             {compare.Partial, ""},
		"Kustomization flux-system/shop .spec.ignore[5]":                             {compare.Equivalent, ""},
		"Kustomization flux-system/infrastructure .spec.ignore[0]":                   {compare.Partial, ""},
		"Kustomization flux-system/infrastructure .spec.ignore[1]":                   {compare.Partial, ""},
		"Kustomization flux-system/infrastructure .spec.ignore[2]":                   {compare.Equivalent, ""},
	}
	seen := map[string]bool{}
	for _, r := range c.Results {
		key := r.Rule.Origin.Object + " " + r.Rule.Origin.Field
		seen[key] = true
		w, ok := expect[key]
		if !ok {
			t.Errorf("unexpected rule %q (%s)", key, r.Status)
			continue
		}
		if r.Status != w.status {
			t.Errorf("%s: status %s, want %s\nreasons: %v\ncounterparts: %+v", key, r.Status, w.status, r.Reasons, r.Counterparts)
		}
		if w.reason != "" && !strings.Contains(strings.Join(r.Reasons, "\n"), w.reason) {
			t.Errorf("%s: no reason containing %q in %q", key, w.reason, r.Reasons)
		}
	}
	for k := range expect {
		if !seen[k] {
			t.Errorf("rule %q missing from the comparison", k)
		}
	}
	// Specific differences the comparison must name.
	byKey := map[string]compare.Result{}
	for _, r := range c.Results {
		byKey[r.Rule.Origin.Object+" "+r.Rule.Origin.Field] = r
	}
	svc := byKey["Application argocd/shop .spec.ignoreDifferences[3]"]
	if len(svc.Counterparts) == 0 || !strings.Contains(strings.Join(svc.Counterparts[0].Differences, "\n"), "Flux rule matches any group, Argo CD rule only group \"\" (the core group)") {
		t.Errorf("core Service vs Flux empty group: differences %+v", svc.Counterparts)
	}
	if svc.Effect == nil || strings.Join(svc.Effect.OnlyCounterparts, ",") != "Service.serving.knative.dev shop/checkout /spec/clusterIP" {
		t.Errorf("by effect, only Flux ignores the Knative Service's clusterIP: %+v", svc.Effect)
	}
	istio := byKey["Application argocd/shop .spec.ignoreDifferences[2]"]
	if istio.Effect == nil || strings.Join(istio.Effect.Fields, ",") != "Deployment.apps shop/web /spec/template/spec/containers/1/image" {
		t.Errorf("select by value evaluated on the manifests: %+v", istio.Effect)
	}
	compareGolden(t, gp, out)
}

func TestCompareCorpusTable(t *testing.T) {
	gp := goldenPath(t, "corpus-compare-table")
	out, _, err := inCorpus(t, newCompareCommand, "argocd-app-of-apps", "flux-repo", "manifests")
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, gp, out)
}

func TestCompareToGoldens(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"corpus-to-flux-kustomization", []string{"argocd-app-of-apps", "--to", "flux"}},
		{"corpus-to-flux-helmrelease", []string{"argocd-app-of-apps", "--to", "flux", "--form", "HelmRelease"}},
		{"corpus-to-argocd-application", []string{"flux-repo", "--to", "argocd"}},
		{"corpus-to-argocd-cm", []string{"flux-repo", "--to", "argocd", "--form", "argocd-cm"}},
		// With manifests, jq programs are expanded to the pointers they
		// select (lossy).
		{"corpus-to-flux-with-manifests", []string{"argocd-app-of-apps", "manifests", "--to", "flux"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gp := goldenPath(t, c.name)
			out, errOut, err := inCorpus(t, newCompareCommand, c.args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			compareGolden(t, gp, out)
		})
	}
}

// TestCompareRoundTrip: `compare --to flux` of the Argo CD rule set, then
// `compare` of the original against the translation, reports every
// translatable rule as equivalent.
func TestCompareRoundTrip(t *testing.T) {
	translated := filepath.Join(t.TempDir(), "translated-ignore.yaml")
	out, errOut, err := inCorpus(t, newCompareCommand, "argocd-app-of-apps", "--to", "flux")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if err := os.WriteFile(translated, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	// Which rules translate without loss (from the translation records).
	recs, _, err := inCorpus(t, newCompareCommand, "argocd-app-of-apps", "--to", "flux", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var trs struct {
		Items []compare.Translation `json:"items"`
	}
	if err := json.Unmarshal([]byte(recs), &trs); err != nil {
		t.Fatal(err)
	}
	translatable := map[string]bool{}
	for _, tr := range trs.Items {
		if len(tr.To) > 0 && len(tr.Untranslatable) == 0 && len(tr.Lossy) == 0 {
			translatable[tr.From.Origin.Object+" "+tr.From.Origin.Field] = true
		}
	}
	if len(translatable) < 8 {
		t.Fatalf("only %d translatable rules in the corpus: %v", len(translatable), translatable)
	}
	res, errOut, err := inCorpus(t, newCompareCommand, "argocd-app-of-apps", translated, "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var c compare.Comparison
	if err := json.Unmarshal([]byte(res), &c); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range c.Results {
		key := r.Rule.Origin.Object + " " + r.Rule.Origin.Field
		switch {
		case r.Rule.Engine == model.Engine("argocd") && translatable[key]:
			checked++
			if r.Status != compare.Equivalent {
				t.Errorf("%s: %s after the round trip: %v %+v", key, r.Status, r.Reasons, r.Counterparts)
			}
		case r.Rule.Engine == model.Engine("flux") && r.Status != compare.Equivalent:
			t.Errorf("translated rule %s is %s, not equivalent to its source", key, r.Status)
		}
	}
	if checked != len(translatable) {
		t.Errorf("checked %d of %d translatable rules", checked, len(translatable))
	}
}

func TestCompareOnlyBrokenInputExits2(t *testing.T) {
	_, errOut, err := inCorpus(t, newCompareCommand, "flux-repo/apps/shop/broken.yaml")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitFailure {
		t.Fatalf("want exit 2, got %v", err)
	}
	if !strings.Contains(errOut, "broken.yaml:6:") {
		t.Fatalf("want file:line, got %q", errOut)
	}
}

func TestCompareMissingPathIsSkipped(t *testing.T) {
	out, errOut, err := inCorpus(t, newCompareCommand, "does-not-exist", "flux-repo/clusters/prod/apps.yaml", "-o", "json")
	if err != nil {
		t.Fatalf("one readable path is enough: %v", err)
	}
	if !strings.Contains(errOut, "does-not-exist") || !strings.Contains(out, "only-flux") {
		t.Fatalf("stderr %q\nstdout %s", errOut, out)
	}
}

// cmRule is an argocd-cm ignoreDifferences rule as the Argo CD adapter
// reads it from a cluster.
func cmRule(kind, ptr string) model.Rule {
	return model.Rule{Engine: model.Engine("argocd"), Type: "argocd.ignoreDifferences", Scope: model.ScopeDiff,
		Origin: model.Origin{Object: "ConfigMap argocd/argocd-cm", Field: "data[resource.customizations.ignoreDifferences.apps_" + kind + "]"},
		Target: model.Selector{Group: "apps", Kind: kind, Syntax: model.MatchGlob}, JSONPointers: []string{ptr}}
}

// perContext is a fake loader: each context's cluster holds the given
// rules; a context missing from the map is unreachable. It counts the
// reads per context.
func perContext(rules map[string][]model.Rule, reads map[string]int) inputLoader {
	return func(_ context.Context, g *GlobalOptions, f *RuleSourceFlags) (*ruleInputs, error) {
		if !f.FromCluster || len(f.Paths) > 0 {
			return nil, errors.New("a context is read from its cluster only")
		}
		c := *g.ConfigFlags.Context
		reads[c]++
		rs, ok := rules[c]
		if !ok {
			return nil, &cluster.UnreachableError{Host: c + ".example:6443", Err: errors.New("connection refused")}
		}
		return &ruleInputs{Rules: append([]model.Rule(nil), rs...), Read: 1}, nil
	}
}

func TestCompareContextsSideBySide(t *testing.T) {
	hubs := map[string][]model.Rule{
		"hub-a": {cmRule("Deployment", "/spec/replicas"), cmRule("StatefulSet", "/spec/replicas")},
		"hub-b": {cmRule("Deployment", "/spec/replicas")},
	}
	g, out, errOut := testGlobals()
	o := NewCompareOptions(g)
	reads := map[string]int{}
	o.load = perContext(hubs, reads)
	cmd := newCompareCmd(o)
	cmd.SetArgs([]string{"--contexts", "hub-a,hub-b,gone", "-o", "json"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if reads["hub-a"] != 1 || reads["hub-b"] != 1 || reads["gone"] != 1 {
		t.Errorf("reads per context %v; want one each", reads)
	}
	if !strings.Contains(errOut.String(), "warning: skipped context gone: ") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("stderr %q; want one warning for the unreachable context", errOut)
	}
	var c compare.Comparison
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]string{}
	for _, r := range c.Results {
		var cps []string
		for _, cp := range r.Counterparts {
			cps = append(cps, cp.Origin.Context)
		}
		got[r.Rule.Origin.Context+" "+r.Rule.Target.Kind] = string(r.Status) + " " + strings.Join(cps, ",")
	}
	want := map[string]string{
		"hub-a Deployment":  "equivalent hub-b",
		"hub-a StatefulSet": "only-argocd@hub-a ",
		"hub-b Deployment":  "equivalent hub-a",
	}
	if len(got) != len(want) {
		t.Errorf("results %v; want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}

	// The table has a context column and names the other side's context.
	g, out, _ = testGlobals()
	o = NewCompareOptions(g)
	o.load = perContext(hubs, map[string]int{})
	cmd = newCompareCmd(o)
	cmd.SetArgs([]string{"--contexts", "hub-a,hub-b"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"ENGINE  CONTEXT", "argocd  hub-a", "in context hub-b", "3 rule(s): 2 equivalent, 1 only-argocd@hub-a"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
}

func TestCompareContextsAllUnreachable(t *testing.T) {
	g, _, errOut := testGlobals()
	o := NewCompareOptions(g)
	o.load = perContext(nil, map[string]int{})
	cmd := newCompareCmd(o)
	cmd.SetArgs([]string{"--contexts", "a,b"})
	err := cmd.ExecuteContext(context.Background())
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitFailure || strings.Count(errOut.String(), "warning: skipped context ") != 2 {
		t.Errorf("err %v, stderr %q; want exit 2 after one warning per context", err, errOut)
	}
}

func TestCompareContextsFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--contexts", "a,b", "--from-cluster"},
		{"--contexts", "a,b", "--to", "flux"},
		{"--contexts", "a,a"},
		{"--contexts", "a,b", "--context", "c"},
	} {
		g, _, _ := testGlobals()
		o := NewCompareOptions(g)
		o.load = perContext(nil, map[string]int{})
		cmd := newCompareCmd(o)
		g.ConfigFlags.AddFlags(cmd.PersistentFlags())
		cmd.SetArgs(args)
		err := cmd.ExecuteContext(context.Background())
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != ExitFailure {
			t.Errorf("%v: err %v; want a usage error (exit 2)", args, err)
		}
	}
}
