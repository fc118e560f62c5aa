package audit

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// auditPrecision audits the fixture testdata/precision/name with the
// shipped engines and cfg (nil: the defaults), as the audit command does.
func auditPrecision(t *testing.T, name string, cfg *Config) *Result {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("testdata", "precision", name))
	if err != nil {
		t.Fatal(err)
	}
	if cfg == nil {
		cfg = &Config{}
	}
	res, err := Run(Options{Root: root, Paths: []string{root}, Config: cfg, Extractors: testExtractors(), Engines: testEngines()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// driftDetectionOn enables the opt-in DRIFT008.
func driftDetectionOn() *Config {
	on := true
	return &Config{Checks: map[string]CheckConfig{string(auditapi.CheckDriftDetectionOff): {Enabled: &on}}}
}

// positions lists the findings of check id as "file:line".
func positions(res *Result, id CheckID) []string {
	var out []string
	for _, f := range res.Findings {
		if f.Check == id {
			out = append(out, f.File+":"+strconv.Itoa(f.Line))
		}
	}
	return out
}

// TestJustificationInsideTheEntry: a comment inside a rule's entry (between
// its keys) justifies it, in an Application and in an argocd-cm block; a
// comment at the entry's own indentation belongs to the next entry, and
// an entry with no comment at all is still reported.
func TestJustificationInsideTheEntry(t *testing.T) {
	res := auditPrecision(t, "comment-inside-rule-entry", nil)
	want := []string{"application.yaml:19"}
	if d := cmp.Diff(want, positions(res, auditapi.CheckNoJustification)); d != "" {
		t.Errorf("DRIFT010 findings (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
}

// TestAggregatedClusterRoleRulesMayBeIgnored: the aggregation controller
// writes the rules of a ClusterRole with an aggregationRule, so ignoring
// its /rules is sound: no DRIFT002 (nor DRIFT001) for it, a note naming
// Argo CD's own setting instead; the same ignore on a hand-written role
// is still an error.
func TestAggregatedClusterRoleRulesMayBeIgnored(t *testing.T) {
	res := auditPrecision(t, "aggregated-clusterrole-rules-ignored", nil)
	if d := cmp.Diff([]string{"application.yaml:17"}, positions(res, auditapi.CheckDangerousTarget)); d != "" {
		t.Errorf("DRIFT002 findings (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
	var notes []Finding
	for _, f := range res.Findings {
		if f.Line == 12 {
			notes = append(notes, f)
		}
	}
	if len(notes) != 1 || notes[0].Severity != SeverityNote || !strings.Contains(notes[0].Message, "ignoreAggregatedRoles: true") {
		t.Errorf("want one note suggesting ignoreAggregatedRoles at line 12, got %+v", notes)
	}
}

// TestFluxPathThatCanNeverMatch: a pointer that no Pod can have (a list
// entered without an index) is flagged from the kind's schema for a Flux
// Kustomization's and a HelmRelease's rule (whose targets are rendered
// outside the repository; its kind written as an anchored regex) as for an
// Application's.
func TestFluxPathThatCanNeverMatch(t *testing.T) {
	res := auditPrecision(t, "flux-path-through-a-list", nil)
	want := []string{"application.yaml:12", "flux.yaml:15", "flux.yaml:33"}
	var got []string
	for _, f := range res.Findings {
		if f.Check == auditapi.CheckMatchesNothing && strings.Contains(f.Message, "can never match a Pod") {
			got = append(got, f.File+":"+strconv.Itoa(f.Line))
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("never-matching paths (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
}

// TestKustomizePatchFragmentsAreNotWholeObjects: the files a
// kustomization.yaml patches with (patches, patchesStrategicMerge,
// patchesJson6902) and documents holding $patch are fragments: an
// ApplicationSet patch without spec.template is no DRIFT005, a HelmRelease
// patch without driftDetection no DRIFT008.
func TestKustomizePatchFragmentsAreNotWholeObjects(t *testing.T) {
	res := auditPrecision(t, "kustomize-patch-fragments", driftDetectionOn())
	for _, f := range res.Findings {
		if f.Check == auditapi.CheckInvalid || f.Check == auditapi.CheckDriftDetectionOff || f.Check == auditapi.CheckUnparsableFile {
			t.Errorf("finding on a patch fragment: %s %s %s", f.Check, f.Position(), f.Message)
		}
	}
}

// TestInvalidPointerHintEscapesOnlyWhenRelevant: DRIFT005's hint speaks of
// ~0/~1 escaping only for a pointer that holds '~' (or a key split by an
// unescaped '/'), and of jq only for jq rules.
func TestInvalidPointerHintEscapesOnlyWhenRelevant(t *testing.T) {
	res := auditPrecision(t, "invalid-pointer-hints", nil)
	hints := map[int]string{}
	for _, f := range res.Findings {
		if f.Check == auditapi.CheckInvalid {
			hints[f.Line] = f.Hint
		}
	}
	if h, ok := hints[12]; !ok || strings.Contains(h, "~0") || strings.Contains(h, "jq") {
		t.Errorf("pointer without '/' at line 12: hint %q (found %v)", h, ok)
	}
	if h, ok := hints[16]; !ok || !strings.Contains(h, "~0") {
		t.Errorf("pointer with '~' at line 16: hint %q (found %v)", h, ok)
	}
}

// TestKustomizationRemoteHelmChartIsANote: an Application whose source
// path is a kustomization inflating a remote chart (helmCharts) renders
// its objects outside the repository, like a chart source: its rules are
// "not checkable offline" (a note), not "matches nothing" (a warning).
func TestKustomizationRemoteHelmChartIsANote(t *testing.T) {
	res := auditPrecision(t, "kustomization-remote-helm-chart", nil)
	var got []Finding
	for _, f := range res.Findings {
		if f.Check == auditapi.CheckMatchesNothing {
			got = append(got, f)
		}
	}
	if len(got) != 1 || got[0].Severity != SeverityNote || !strings.Contains(got[0].Message, "not checkable offline") || !strings.Contains(got[0].Message, "ingress-nginx") {
		t.Errorf("want one DRIFT006 note naming the chart, got %+v", got)
	}
}

// TestFluxKustomizationPatchesSetDriftDetection: a Kustomization's
// spec.patches that enable driftDetection on the HelmReleases it applies
// (a strategic-merge patch targeting every HelmRelease, a JSON 6902 patch
// targeting one) are read as kustomize-controller applies them: no
// DRIFT008 for those releases, their ignore rules listed with the patch's
// file:line; a HelmRelease outside the Kustomization's path is untouched.
func TestFluxKustomizationPatchesSetDriftDetection(t *testing.T) {
	res := auditPrecision(t, "flux-kustomization-patches-drift-detection", driftDetectionOn())
	if d := cmp.Diff([]string{"infrastructure/cert-manager.yaml:2"}, positions(res, auditapi.CheckDriftDetectionOff)); d != "" {
		t.Errorf("DRIFT008 findings (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
	root := filepath.Join("testdata", "precision", "flux-kustomization-patches-drift-detection")
	docs, err := source.LoadFiles([]string{root}, nil, source.Options{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	rules, errs := flux.RulesFromDocuments(docs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, r := range rules {
		if r.Type == flux.RuleHelmIgnore {
			got = append(got, fmt.Sprintf("%s %s:%d %s", r.Origin.Object, filepath.Base(r.Origin.File), r.Origin.Line, strings.Join(r.JSONPointers, ",")))
		}
	}
	want := []string{
		"HelmRelease podinfo/podinfo apps.yaml:26 /spec/replicas",
		"HelmRelease redis/redis apps.yaml:26 /spec/replicas",
		"HelmRelease redis/redis apps.yaml:33 /spec/volumeClaimTemplates",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("HelmRelease rules (-want +got):\n%s", d)
	}
}

// TestDriftDetectionOffIsOptIn: DRIFT008 runs only when the configuration
// enables it (by ID or name) or requires self-heal; an explicit
// enabled: false wins over the policy.
func TestDriftDetectionOffIsOptIn(t *testing.T) {
	on, off := true, false
	for _, c := range []struct {
		name string
		cfg  *Config
		want bool
	}{
		{"default", &Config{}, false},
		{"enabled by ID", driftDetectionOn(), true},
		{"enabled by name", &Config{Checks: map[string]CheckConfig{"drift-detection-off": {Enabled: &on}}}, true},
		{"policy requireSelfHeal", &Config{Policy: Policy{RequireSelfHeal: true}}, true},
		{"policy, but switched off", &Config{Policy: Policy{RequireSelfHeal: true}, Checks: map[string]CheckConfig{"DRIFT008": {Enabled: &off}}}, false},
	} {
		res := auditPrecision(t, "flux-kustomization-patches-drift-detection", c.cfg)
		if got := len(positions(res, auditapi.CheckDriftDetectionOff)) > 0; got != c.want {
			t.Errorf("%s: DRIFT008 reported %v, want %v", c.name, got, c.want)
		}
	}
	for _, chk := range Checks() {
		if chk.OptIn != (chk.ID == auditapi.CheckDriftDetectionOff) {
			t.Errorf("%s: OptIn %v", chk.ID, chk.OptIn)
		}
	}
}

// TestNamedSecretDataIsANote: ignoring /data of one Secret named exactly
// (a webhook certificate its chart regenerates at every render) hides that
// Secret's data only: a DRIFT002 note naming it, and no DRIFT001 for the
// whole data field; ignoring /data of every Secret stays an error.
func TestNamedSecretDataIsANote(t *testing.T) {
	res := auditPrecision(t, "named-secret-data-ignored", nil)
	got := map[int]string{}
	for _, f := range res.Findings {
		switch f.Check {
		case auditapi.CheckDangerousTarget:
			got[f.Line] = string(f.Severity) + " " + f.Message
		case auditapi.CheckTooBroad:
			t.Errorf("DRIFT001 at line %d: %s", f.Line, f.Message)
		}
	}
	want := map[int]string{
		12: "note path /data ignores all data of Secret aws-load-balancer-tls",
		16: "error path /data ignores all Secret data",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("DRIFT002 findings by line (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
}

// TestInstanceWideCustomizationOfUnusedKind: an instance-wide
// customization (argocd-cm, an ArgoCD resource) applies to the objects of
// every Application of the instance, so matching no manifest of this
// repository says nothing when its kind exists: a built-in kind
// (MutatingWebhookConfiguration, StatefulSet) or a kind whose CRD is in the
// tree (cert-manager's Certificate) gets no DRIFT006. A misspelt kind
// (Deploymnet) and an Application's own rule that matches nothing still do.
func TestInstanceWideCustomizationOfUnusedKind(t *testing.T) {
	res := auditPrecision(t, "instance-wide-customizations-of-unused-kinds", nil)
	var got []string
	for _, f := range res.Findings {
		if f.Check == auditapi.CheckMatchesNothing {
			got = append(got, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Message))
		}
	}
	want := []string{
		`application.yaml:12 no manifest in the repository matches apps/Deployment (glob)`,
		`argocd-cm.yaml:12 no manifest in the repository matches apps/Deploymnet (glob); nearest: kind "Deployment" instead of "Deploymnet"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("DRIFT006 findings (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
}

// TestPlaceholderTemplatesAreSkipped: a file that fails to parse only at
// lines holding a lone <UPPER_SNAKE> placeholder (kubefirst's
// <CERT_MANAGER_ISSUER_ANNOTATION_1>, filled in by its CLI) is a template,
// skipped and counted like a {{ }} template, not a DRIFT012 error; a file
// broken elsewhere, or whose bad line holds more than the placeholder, is
// still reported.
func TestPlaceholderTemplatesAreSkipped(t *testing.T) {
	res := auditPrecision(t, "placeholder-templates", nil)
	var got []string
	for _, f := range res.Findings {
		got = append(got, fmt.Sprintf("%s %s:%d", f.Check, f.File, f.Line))
	}
	// yaml.v3 places the unclosed flow sequence of broken.yaml at the line
	// before it.
	want := []string{"DRIFT012 broken.yaml:7", "DRIFT012 placeholder-not-alone.yaml:7"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("findings (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
	if res.Files != 3 || res.Skipped != 1 || res.Manifests != 0 {
		t.Errorf("files %d, skipped %d, manifests %d; want 3, 1 (the placeholder template), 0", res.Files, res.Skipped, res.Manifests)
	}
}

// TestSameApplicationNameInTwoEnvironments: per-environment folders repeat
// an Application's namespace/name (one per cluster); the rules of both
// files are kept, each at its own file:line, and two environments' copies
// of a rule are neither duplicates (DRIFT004) nor shadowed (DRIFT003).
func TestSameApplicationNameInTwoEnvironments(t *testing.T) {
	const name = "same-application-name-in-two-environments"
	res := auditPrecision(t, name, nil)
	root, err := filepath.Abs(filepath.Join("testdata", "precision", name))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := collect(Options{Root: root, Extractors: testExtractors(), Engines: testEngines()}, root, []string{"."}, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range snap.rules {
		got = append(got, fmt.Sprintf("%s %s:%d", r.Origin.Object, r.Origin.File, r.Origin.Line))
	}
	sort.Strings(got)
	want := []string{
		"Application argocd/cert-manager production/cert-manager.yaml:12",
		"Application argocd/cert-manager production/cert-manager.yaml:16",
		"Application argocd/cert-manager staging/cert-manager.yaml:12",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
	for _, f := range res.Findings {
		if f.Check == auditapi.CheckShadowed || f.Check == auditapi.CheckDuplicate {
			t.Errorf("%s %s: %s", f.Check, f.Position(), f.Message)
		}
	}
}

// TestArgoCDValuesOverlaysWithoutRuleKeys: argo-cd chart values that set
// no rule key (per-environment overlays with configs.cm ui.bannercontent)
// still render an argocd-cm, whose resource.compareoptions default ignores
// /status: one rule each, as the independent corpus count says. A
// configs.cm with nothing of its own (create only) adds no instance, and
// another chart's configs.cm is not Argo CD's.
func TestArgoCDValuesOverlaysWithoutRuleKeys(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("testdata", "precision", "argo-cd-values-overlays-without-rule-keys"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := collect(Options{Root: root, Extractors: testExtractors(), Engines: testEngines(), Values: argocd.ValuesFileDocuments}, root, []string{"."}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"chart-values environments/dev/values.yaml argocd.compareOptions":  1,
		"chart-values environments/prod/values.yaml argocd.compareOptions": 1,
	}
	if d := cmp.Diff(want, countRules(snap.rules)); d != "" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
}

// TestFilesThatAreNotManifestsAreSkipped: files no engine applies as
// manifests are skipped, not DRIFT012/DRIFT005 errors: a script's template
// with {UPPER_SNAKE} placeholders (aws-samples/eks-saas-gitops' tier
// templates: "name: {TENANT_ID}" is a flow mapping to YAML, "{TENANT_ID}-basic"
// does not parse), a file a kustomization's configMapGenerator reads as
// bytes (ricsanfre/pi-cluster's values with a Flux ${VAR} in a flow
// sequence), a JSONC file (tsconfig.json with comments) and Terraform
// templatefile values (awslabs/data-on-eks: a %{ if } directive line, a
// ${cond ? "a" : "b"} expression). A kro manifest whose ${ } CEL
// expressions parse but which repeats a key, a resource
// with the same ${VAR} line, a broken JSON manifest and flow mappings that
// are not placeholders are still read and reported.
func TestFilesThatAreNotManifestsAreSkipped(t *testing.T) {
	res := auditPrecision(t, "not-manifests", nil)
	var got []string
	for _, f := range res.Findings {
		got = append(got, fmt.Sprintf("%s %s:%d", f.Check, f.File, f.Line))
	}
	want := []string{"DRIFT012 component/broken.yaml:5", "DRIFT012 kro-duplicate-key.yaml:14", "DRIFT012 website/broken.json:1"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("findings (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
	// 12 files: kustomization.yaml, the two generator files, the four
	// templates and tsconfig.json are skipped; literal-braces.yaml is the
	// one manifest.
	if res.Files != 12 || res.Skipped != 8 || res.Manifests != 1 {
		t.Errorf("files %d, skipped %d, manifests %d; want 12, 8, 1", res.Files, res.Skipped, res.Manifests)
	}
}

// TestInstanceWideCustomizationOfOutsideGroup: an argocd-cm customization
// of a kind whose group no manifest, CRD or built-in kind of the tree has
// (Crossplane's, installed from its chart: gitops-ziichat-app/argo-config)
// cannot be judged offline: a DRIFT006 note, not a warning. A group one
// edit away from a built-in one (app for apps) is a misspelling: a warning
// naming the nearest group.
func TestInstanceWideCustomizationOfOutsideGroup(t *testing.T) {
	res := auditPrecision(t, "instance-wide-customization-of-outside-group", nil)
	var got []string
	for _, f := range res.Findings {
		if f.Check == auditapi.CheckMatchesNothing {
			got = append(got, fmt.Sprintf("%s:%d %s %s", f.File, f.Line, f.Severity, f.Message))
		}
	}
	want := []string{
		`argocd-cm.yaml:8 note not checkable offline: no manifest or CRD in the repository has group "apiextensions.crossplane.io"; its kinds are installed from outside it`,
		`argocd-cm.yaml:12 warning no manifest in the repository matches app/Deployment (glob); nearest: group "apps" instead of "app"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("DRIFT006 findings (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
}

// TestLocalChartSourceIsANote: an Application whose source path is a Helm
// chart of the repository (aws-samples/appmod-blueprints' fleet-secret
// chart) gets its objects from templates the audit does not render: its
// rule that matches no manifest is a DRIFT006 note naming the chart, as
// for a remote chart. The same rule on an Application of plain manifests
// is still a warning.
func TestLocalChartSourceIsANote(t *testing.T) {
	res := auditPrecision(t, "local-chart-source", nil)
	var got []string
	for _, f := range res.Findings {
		if f.Check == auditapi.CheckMatchesNothing {
			got = append(got, fmt.Sprintf("%s:%d %s %s", f.File, f.Line, f.Severity, f.Message))
		}
	}
	want := []string{
		"appset.yaml:17 note not checkable offline: Application argocd/fleet-secret renders the Helm chart templates in charts/fleet-secret, whose objects are not in the repository",
		"appset.yaml:38 warning no manifest in the repository matches external-secrets.io/ExternalSecret (glob)",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("DRIFT006 findings (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
}
