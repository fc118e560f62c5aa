package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kubectl-drift/kubectl-drift/internal/compare"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

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

func TestRulesCorpus(t *testing.T) {
	gp := goldenPath(t, "corpus-rules-yaml")
	out, errOut, err := inCorpus(t, newRulesCommand, "argocd-app-of-apps", "flux-repo", "-o", "yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
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

func normalizeCmd(g *GlobalOptions) *cobra.Command {
	o := NewNormalizeOptions(g)
	o.getenv = func(string) string { return "" }
	return newNormalizeCmd(o)
}

// TestNormalizeCorpus runs both engines' normalization over the corpus: the
// object alone, and --diff against the desired state in Git. The goldens
// show what each engine still calls drift: both see the ssa annotation the
// live copy lacks; only Flux sees the Istio image, which Argo CD's jq rule
// (select by container name) hides.
func TestNormalizeCorpus(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"normalize-argocd", []string{"-f", "live/deployment-web.yaml", "--engine", "argocd", "--rules", "argocd-app-of-apps"}, 0},
		{"normalize-flux", []string{"-f", "live/deployment-web.yaml", "--engine", "flux", "--rules", "flux-repo"}, 0},
		{"normalize-argocd-diff", []string{"-f", "live/deployment-web.yaml", "--engine", "argocd", "--rules", "argocd-app-of-apps", "--diff", "-f", "flux-repo/apps/shop/deployment.yaml"}, 1},
		{"normalize-flux-diff", []string{"-f", "live/deployment-web.yaml", "--engine", "flux", "--rules", "flux-repo", "--diff", "-f", "flux-repo/apps/shop/deployment.yaml"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			gp := goldenPath(t, c.name)
			// --engine is a root flag; set it on the globals.
			var args []string
			engine := ""
			for i := 0; i < len(c.args); i++ {
				if c.args[i] == "--engine" {
					engine = c.args[i+1]
					i++
					continue
				}
				args = append(args, c.args[i])
			}
			out, errOut, err := inCorpus(t, func(g *GlobalOptions) *cobra.Command {
				g.Engine = engine
				return normalizeCmd(g)
			}, args...)
			code := 0
			var ee *ExitError
			if errors.As(err, &ee) {
				code = ee.Code
			} else if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if code != c.code {
				t.Fatalf("exit %d, want %d: %v\n%s", code, c.code, err, errOut)
			}
			compareGolden(t, gp, out)
		})
	}
}

// TestRulesKustomizeOverlay reads rules from a kustomize build (-k): the
// overlay's patch adds a second ignore entry to the base Kustomization.
func TestRulesKustomizeOverlay(t *testing.T) {
	out, errOut, err := inCorpus(t, newRulesCommand, "-k", "kustomize-overlay/overlays/prod", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var l RuleList
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 2 || l.Items[1].JSONPointers[0] != "/spec/template/spec/containers/0/resources" ||
		l.Items[1].Origin.Field != ".spec.ignore[1]" || l.Items[1].Origin.File != "kustomize-overlay/overlays/prod" {
		t.Fatalf("rules from the overlay: %+v", l.Items)
	}
}
