package audit

import (
	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// checkCase: the findings of one check for some rules over some manifests.
// want lists a substring per expected finding, in order; empty means the
// check must find nothing.
type checkCase struct {
	name  string
	cfg   *Config
	docs  []Document
	rules []model.Rule
	want  []string
}

func runCheckCases(t *testing.T, id CheckID, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg == nil {
				cfg = noJustification()
			}
			docs := tc.docs
			if docs == nil {
				docs = []Document{deployment("shop", "web").doc()}
			}
			got := only(runChecks(t, t.TempDir(), cfg, docs, tc.rules...), id)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d %s findings, want %d: %+v", len(got), id, len(tc.want), got)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i].Message, w) {
					t.Errorf("finding %d: message %q does not contain %q", i, got[i].Message, w)
				}
				if got[i].File == "" || got[i].Line == 0 {
					t.Errorf("finding %d has no position: %+v", i, got[i])
				}
			}
		})
	}
}

func TestTooBroad(t *testing.T) {
	runCheckCases(t, auditapi.CheckTooBroad, []checkCase{
		{name: "single field is fine", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas").rule()}},
		{name: "all of spec", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/spec").rule()}, want: []string{"the whole spec"}},
		{name: "all of metadata via jq", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").jq(".metadata").rule()}, want: []string{"whole top-level metadata field"}},
		{name: "container list", rules: []model.Rule{fluxKs("a").gk("apps", "Deployment").ptr("/spec/template/spec/containers").rule()}, want: []string{"whole containers list"}},
		{name: "whole pod template", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/spec/template").rule()}, want: []string{"pod template"}},
		{name: "whole object", rules: []model.Rule{fluxHR("a").gk("", "ConfigMap").whole().rule()}, want: []string{"whole object"}},
		{name: "kind star with a kind-specific path", rules: []model.Rule{argoCM("all").gk("*", "*").ptr("/spec/replicas").rule()}, want: []string{"applies to every kind"}},
		{name: "flux rule without target and spec path", rules: []model.Rule{fluxKs("a").ptr("/spec/replicas").rule()}, want: []string{"applies to every kind"}},
		{name: "kind star on a metadata path is fine", rules: []model.Rule{argoCM("all").gk("*", "*").ptr("/metadata/annotations/x").rule()}},
		{name: "status is fine", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/status").rule()}},
		{name: "exclusion of every kind", rules: []model.Rule{argoCM("x").typ(argocd.RuleResourceExclusion).gk("*", "*").whole().scope(model.ScopeDiscovery).rule()}, want: []string{"every kind"}},
		{name: "secret data is dangerous, not broad", rules: []model.Rule{argoApp("a").gk("", "Secret").ptr("/data").rule()}},
		{name: "configmap data is broad", rules: []model.Rule{argoApp("a").gk("", "ConfigMap").ptr("/data").rule()}, want: []string{"whole top-level data field"}},
		{name: "refresh-only rules are not drift rules", rules: []model.Rule{argoCM("all").gk("*", "*").ptr("/spec").scope(model.ScopeRefresh).rule()}},
	})
}

func TestDangerous(t *testing.T) {
	runCheckCases(t, auditapi.CheckDangerousTarget, []checkCase{
		{name: "replicas is fine", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas").rule()}},
		{name: "image", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/spec/template/spec/containers/0/image").rule()}, want: []string{"container images"}},
		{name: "image via jq", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").jq(".spec.template.spec.containers[].image").rule()}, want: []string{"container images"}},
		{name: "command", rules: []model.Rule{fluxKs("a").gk("apps", "Deployment").ptr("/spec/template/spec/initContainers/1/command").rule()}, want: []string{"command"}},
		{name: "securityContext", rules: []model.Rule{fluxKs("a").gk("apps", "Deployment").ptr("/spec/template/spec/securityContext/runAsUser").rule()}, want: []string{"securityContext"}},
		{name: "rbac rules", rules: []model.Rule{argoApp("a").gk("rbac.authorization.k8s.io", "ClusterRole").ptr("/rules").rule()}, want: []string{"RBAC rules"}},
		{name: "rules of a non-RBAC kind are fine", rules: []model.Rule{argoApp("a").gk("monitoring.coreos.com", "PrometheusRule").ptr("/spec/groups").rule()}},
		{name: "whole secret", rules: []model.Rule{fluxHR("a").gk("", "Secret").whole().rule()}, want: []string{"whole Secrets"}},
		{name: "secret data", rules: []model.Rule{argoApp("a").gk("", "Secret").ptr("/data").rule()}, want: []string{"Secret data"}},
		{name: "secret exclusion", rules: []model.Rule{argoCM("x").typ(argocd.RuleResourceExclusion).gk("", "Secret").whole().scope(model.ScopeDiscovery).rule()}, want: []string{"whole Secrets"}},
		{name: "secret by regex", rules: []model.Rule{fluxKs("a").gk("", "Secret|ConfigMap").whole().rule()}, want: []string{"whole Secrets"}},
	})
}

func TestShadowedAndDuplicate(t *testing.T) {
	cmAll := argoCM("all").gk("*", "*").ptr("/metadata/annotations").at("argocd/argocd-cm.yaml", 5).rule()
	appAnn := argoApp("shop").gk("apps", "Deployment").ptr("/metadata/annotations/x").at("argocd/apps.yaml", 30).rule()
	cases := []checkCase{
		{name: "app rule under argocd-cm all", rules: []model.Rule{cmAll, appAnn}, want: []string{"covered by the broader rule of ConfigMap argocd/argocd-cm"}},
		{name: "rules of two apps do not shadow", rules: []model.Rule{
			argoApp("a").gk("apps", "Deployment").ptr("/spec").at("argocd/apps.yaml", 10).rule(),
			argoApp("b").gk("apps", "Deployment").ptr("/spec/replicas").at("argocd/apps.yaml", 40).rule()}},
		{name: "kind glob covers a literal kind", rules: []model.Rule{
			argoApp("a").gk("apps", "*").ptr("/spec/replicas").at("argocd/apps.yaml", 10).rule(),
			argoApp("a").gk("apps", "Deployment").name("web").ptr("/spec/replicas").at("argocd/apps.yaml", 20).rule()},
			want: []string{"covered by"}},
		{name: "managers subset", rules: []model.Rule{
			argoApp("a").gk("apps", "Deployment").managers("kube-controller-manager", "hpa").at("argocd/apps.yaml", 10).rule(),
			argoApp("a").gk("apps", "Deployment").managers("hpa").at("argocd/apps.yaml", 20).rule()},
			want: []string{"covered by"}},
		{name: "different paths are independent", rules: []model.Rule{
			fluxKs("a").gk("apps", "Deployment").ptr("/spec/replicas").at("flux/ks.yaml", 10).rule(),
			fluxKs("a").gk("apps", "Deployment").ptr("/spec/paused").at("flux/ks.yaml", 20).rule()}},
		{name: "flux regex covers literal", rules: []model.Rule{
			fluxKs("a").gk("apps", "Deployment|StatefulSet").ptr("/spec/replicas").at("flux/ks.yaml", 10).rule(),
			fluxKs("a").gk("apps", "StatefulSet").ptr("/spec/replicas").at("flux/ks.yaml", 20).rule()},
			want: []string{"covered by"}},
	}
	runCheckCases(t, auditapi.CheckShadowed, cases)
	runCheckCases(t, auditapi.CheckDuplicate, []checkCase{
		{name: "same rule twice in one app", rules: []model.Rule{
			argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas").at("argocd/apps.yaml", 10).rule(),
			argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas").at("argocd/apps.yaml", 20).rule()},
			want: []string{"repeats rule of Application argocd/a"}},
		{name: "app rule equal to argocd-cm rule", rules: []model.Rule{
			argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas").at("argocd/apps.yaml", 10).rule(),
			argoCM("apps_Deployment").gk("apps", "Deployment").ptr("/spec/replicas").at("argocd/argocd-cm.yaml", 20).rule()},
			want: []string{"repeats rule of ConfigMap argocd/argocd-cm"}},
		{name: "kustomization and helmrelease of one namespace", rules: []model.Rule{
			fluxKs("apps").gk("apps", "Deployment").ptr("/spec/replicas").at("flux/ks.yaml", 10).rule(),
			fluxHR("podinfo").gk("apps", "Deployment").ptr("/spec/replicas").at("flux/hr.yaml", 20).rule()},
			want: []string{"repeats rule of HelmRelease flux-system/podinfo"}},
		{name: "argo and flux never duplicate", rules: []model.Rule{
			argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas").rule(),
			fluxKs("a").gk("apps", "Deployment").ptr("/spec/replicas").rule()}},
	})
}

func TestInvalid(t *testing.T) {
	runCheckCases(t, auditapi.CheckInvalid, []checkCase{
		{name: "valid", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/metadata/annotations/a~1b").jq(".spec.replicas").rule()}},
		{name: "adapter error", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").err("unknown key \"jsonPointer\"").rule()}, want: []string{"unknown key"}},
		{name: "pointer without slash", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("spec/replicas").rule()}, want: []string{"must start with '/'"}},
		{name: "unescaped tilde", rules: []model.Rule{fluxKs("a").gk("apps", "Deployment").ptr("/metadata/annotations/a~b").rule()}, want: []string{"unescaped '~'"}},
		{name: "unescaped slash in annotation key", rules: []model.Rule{fluxKs("a").gk("apps", "Deployment").ptr("/metadata/annotations/example.com/owner").rule()}, want: []string{"/metadata/annotations/example.com~1owner"}},
		{name: "bad jq", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").jq(".spec.[").rule()}, want: []string{"jq path expression"}},
		{name: "bad regex", rules: []model.Rule{fluxKs("a").gk("apps", "Deploy(ment").ptr("/spec/replicas").rule()}, want: []string{"invalid kind regex"}},
		{name: "bad glob", rules: []model.Rule{argoApp("a").gk("apps", "Deploy[ment").ptr("/spec/replicas").rule()}, want: []string{"invalid kind glob"}},
		{name: "bad label selector", rules: []model.Rule{argoApp("a").gk("apps", "Deployment").labels("app in (").ptr("/spec/replicas").rule()}, want: []string{"invalid label selector"}},
	})
}

func TestMatchesNothing(t *testing.T) {
	docs := []Document{
		deployment("shop", "web").doc(),
		manifest("v1", "ConfigMap", "shop", "settings").set("x", "data", "a").doc(),
	}
	runCheckCases(t, auditapi.CheckMatchesNothing, []checkCase{
		{name: "matches", docs: docs, rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas").rule()}},
		{name: "group typo", docs: docs, rules: []model.Rule{argoApp("a").gk("app", "Deployment").ptr("/spec/replicas").rule()}, want: []string{`kind Deployment is in group "apps", not "app"`}},
		{name: "kind case", docs: docs, rules: []model.Rule{argoApp("a").gk("apps", "deployment").ptr("/spec/replicas").rule()}, want: []string{`nearest: kind "Deployment" instead of "deployment"`}},
		{name: "core kind with a group", docs: docs, rules: []model.Rule{fluxKs("a").gk("core", "ConfigMap").ptr("/data/a").rule()}, want: []string{`kind ConfigMap is in group "", not "core"`}},
		{name: "name typo", docs: docs, rules: []model.Rule{argoApp("a").gk("apps", "Deployment").name("wbe").ptr("/spec/replicas").rule()}, want: []string{`nearest: name "web"`}},
		{name: "namespace typo", docs: docs, rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ns("shoop").ptr("/spec/replicas").rule()}, want: []string{`nearest: namespace "shop"`}},
		{name: "path typo", docs: docs, rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/spce/replicas").rule()}, want: []string{`nearest: "spec" instead of "spce"`}},
		{name: "absent field under an existing parent is fine", docs: docs, rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/spec/paused").rule()}},
		{name: "metadata paths are not checked", docs: docs, rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/metadata/annotations/x").rule()}},
		{name: "helm release targets chart objects", docs: docs, rules: []model.Rule{fluxHR("a").gk("apps", "StatefulSet").ptr("/spec/replicas").rule()}},
		{name: "match-all targets are not checked", docs: docs, rules: []model.Rule{argoCM("all").gk("*", "*").ptr("/metadata/labels").rule()}},
	})
}

func TestSlowJQ(t *testing.T) {
	cfg := noJustification()
	cfg.JQ.Timeout.Duration = 100 * time.Millisecond
	runCheckCases(t, auditapi.CheckSlowJQ, []checkCase{
		{name: "fast", cfg: cfg, rules: []model.Rule{argoApp("a").gk("apps", "Deployment").jq(".spec.replicas").rule()}},
		{name: "never ends", cfg: cfg, rules: []model.Rule{argoApp("a").gk("apps", "Deployment").jq(".spec | until(false; .)").rule()}, want: []string{"did not finish within Argo CD's 100ms limit on Deployment shop/web"}},
	})
}

func TestDriftOff(t *testing.T) {
	app := func(selfHeal bool) Document {
		b := manifest("argoproj.io/v1alpha1", "Application", "argocd", "shop").at("argocd/apps.yaml", 3)
		if selfHeal {
			b.set(true, "spec", "syncPolicy", "automated", "selfHeal")
		}
		return b.doc()
	}
	policy := noJustification()
	policy.Policy.RequireSelfHeal = true
	// DRIFT008 is opt-in (TestDriftDetectionOffIsOptIn).
	on := noJustification()
	enabled := true
	on.Checks = map[string]CheckConfig{"DRIFT008": {Enabled: &enabled}}
	runCheckCases(t, auditapi.CheckDriftDetectionOff, []checkCase{
		{name: "helm drift detection disabled", cfg: on, rules: []model.Rule{fluxHR("p").typ(flux.RuleDriftDisabled).gk("helm.toolkit.fluxcd.io", "HelmRelease").rule()}, want: []string{"drift detection is off"}},
		{name: "reconcile disabled", cfg: on, rules: []model.Rule{fluxKs("p").typ(flux.RuleReconcileDisabled).gk("apps", "Deployment").name("web").rule()}, want: []string{"reconcile: disabled"}},
		{name: "ssa ignore", cfg: on, rules: []model.Rule{fluxKs("p").typ(flux.RuleSSAAnnotation).value("Ignore").gk("apps", "Deployment").name("web").rule()}, want: []string{"ssa: Ignore"}},
		{name: "ssa merge is not off", cfg: on, rules: []model.Rule{fluxKs("p").typ(flux.RuleSSAAnnotation).value("Merge").gk("apps", "Deployment").rule()}},
		{name: "not enabled", rules: []model.Rule{fluxKs("p").typ(flux.RuleReconcileDisabled).gk("apps", "Deployment").name("web").rule()}},
		{name: "no self-heal without the policy", cfg: on, docs: []Document{app(false)}},
		{name: "no self-heal with the policy", cfg: policy, docs: []Document{app(false)}, want: []string{"Application argocd/shop has no .spec.syncPolicy.automated.selfHeal"}},
		{name: "applicationset template without self-heal", cfg: policy, docs: []Document{
			manifest("argoproj.io/v1alpha1", "ApplicationSet", "argocd", "envs").set(true, "spec", "template", "spec", "syncPolicy", "automated", "prune").doc()},
			want: []string{"ApplicationSet argocd/envs has no .spec.template.spec.syncPolicy.automated.selfHeal"}},
		{name: "self-heal with the policy", cfg: policy, docs: []Document{app(true)}},
	})
}

func TestBudget(t *testing.T) {
	rules := []model.Rule{
		argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas").at("argocd/apps.yaml", 10).rule(),
		argoApp("a").gk("apps", "Deployment").ptr("/spec/paused").at("argocd/apps.yaml", 20).rule(),
		argoApp("b").gk("apps", "Deployment").ptr("/spec/paused").at("argocd/apps.yaml", 30).rule(),
	}
	total, perApp := noJustification(), noJustification()
	total.Budget.Total = 2
	perApp.Budget.PerApp = 1
	runCheckCases(t, auditapi.CheckOverBudget, []checkCase{
		{name: "within", cfg: noJustification(), rules: rules},
		{name: "total", cfg: total, rules: rules, want: []string{"3 ignore rules in total, budget 2: this is rule 3"}},
		{name: "per app", cfg: perApp, rules: rules, want: []string{"Application argocd/a has 2 ignore rules, budget 1 per app"}},
	})
	got := only(runChecks(t, t.TempDir(), total, nil, rules...), auditapi.CheckOverBudget)
	if len(got) != 1 || got[0].Line != 30 {
		t.Errorf("total budget finding should sit on the first rule over budget (line 30): %+v", got)
	}
}

func TestJustification(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFile(t, root, "argocd/apps.yaml", `spec:
  ignoreDifferences:
    # HPA owns replicas (OPS-12)
    - group: apps
      kind: Deployment
      jsonPointers: [/spec/replicas]

    - group: apps
      kind: StatefulSet
      jsonPointers: [/spec/replicas]
    - group: "" # the webhook injects it
      kind: Service
`)
	rules := []model.Rule{
		argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas").at("argocd/apps.yaml", 4).rule(),
		argoApp("a").gk("apps", "StatefulSet").ptr("/spec/replicas").at("argocd/apps.yaml", 8).rule(),
		argoApp("a").gk("", "Service").ptr("/spec/clusterIP").at("argocd/apps.yaml", 11).rule(),
	}
	got := only(runChecks(t, root, &Config{}, nil, rules...), auditapi.CheckNoJustification)
	if len(got) != 1 || got[0].Line != 8 {
		t.Fatalf("want one finding at line 8, got %+v", got)
	}
	pat := &Config{Justification: Justification{Pattern: `\(OPS-\d+\)`}}
	got = only(runChecks(t, root, pat, nil, rules...), auditapi.CheckNoJustification)
	if len(got) != 2 || got[0].Line != 8 || got[1].Line != 11 || !strings.Contains(got[1].Message, "does not match") {
		t.Fatalf("with a pattern, want findings at lines 8 and 11, got %+v", got)
	}
}

func TestConfigAppliesSeveritiesAndAllowList(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
checks:
  too-broad: {severity: error}
  DRIFT006: {enabled: false}
justification: {required: false}
allow:
  - check: DRIFT002
    file: argocd/*.yaml
    reason: the sidecar image is pinned by the mesh operator
  - check: dangerous-target
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.file = "/repo/.drift-audit.yaml"
	rules := []model.Rule{
		argoApp("b").gk("apps", "Deployment").ptr("/spec").at("argocd/apps.yaml", 10).rule(),
		argoApp("a").gk("apps", "Deployment").ptr("/spec/template/spec/containers/1/image").at("argocd/apps.yaml", 20).rule(),
		fluxKs("a").gk("apps", "Deployment").ptr("/spec/template/spec/containers/1/image").at("flux/ks.yaml", 20).rule(),
		argoApp("a").gk("apps", "Deploymnt").ptr("/spec/replicas").at("argocd/apps.yaml", 30).rule(),
	}
	s := &snapshot{root: "/repo", engines: newEngines(testEngines()), docs: []Document{deployment("shop", "web").doc()}, rules: rules}
	got, suppressed := applyConfig(analyze(s, cfg, 0), cfg, "/repo")
	var summary []string
	for _, f := range got {
		summary = append(summary, string(f.Check)+" "+string(f.Severity)+" "+f.Position())
	}
	want := []string{
		"DRIFT011 error .drift-audit.yaml:10:5",
		"DRIFT001 error argocd/apps.yaml:10:7",
		"DRIFT002 error flux/ks.yaml:20:7",
	}
	if strings.Join(summary, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(summary, "\n"), strings.Join(want, "\n"))
	}
	if suppressed != 1 {
		t.Errorf("suppressed = %d, want 1", suppressed)
	}
}

func TestParseConfigRejects(t *testing.T) {
	for name, in := range map[string]string{
		"unknown key":     "alow: []",
		"unknown check":   "checks: {DRIFT999: {enabled: false}}",
		"bad severity":    "checks: {DRIFT001: {severity: fatal}}",
		"bad pattern":     "justification: {pattern: '('}",
		"negative budget": "budget: {total: -1}",
		"bad duration":    "jq: {timeout: soon}",
		"not a mapping":   "- a",
		"bad allow check": "allow: [{check: nope, reason: x}]",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseConfig([]byte(in)); err == nil {
				t.Errorf("ParseConfig(%q) succeeded", in)
			}
		})
	}
}

func TestInvalidUnknownKeys(t *testing.T) {
	app := manifest("argoproj.io/v1alpha1", "Application", "argocd", "a").at("argocd/apps.yaml", 1).
		set([]any{
			map[string]any{"group": "apps", "kind": "Deployment", "jsonPointers": []any{"/spec/replicas"}},
			map[string]any{"group": "apps", "kind": "Deployment", "jsonPointer": []any{"/spec/paused"}},
		}, "spec", "ignoreDifferences").doc()
	ks := manifest("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "a").at("flux/ks.yaml", 1).
		set([]any{map[string]any{"paths": []any{"/spec/replicas"}, "target": map[string]any{"kind": "Deployment", "nmae": "web"}}},
			"spec", "ignore").doc()
	cm := manifest("v1", "ConfigMap", "argocd", "argocd-cm").at("argocd/argocd-cm.yaml", 1).
		set(map[string]any{"resource.customizations.ignoreDifferences.apps_Deployment": "jqPathExpression:\n- .spec.replicas\n"}, "data").doc()
	docs := []Document{deployment("shop", "web").doc(), app, ks, cm}
	runCheckCases(t, auditapi.CheckInvalid, []checkCase{
		{name: "known keys", docs: docs, rules: []model.Rule{argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas").rule()}},
		{name: "application item", docs: docs, rules: []model.Rule{argoApp("a").gk("apps", "Deployment").field(".spec.ignoreDifferences[1]").rule()},
			want: []string{`unknown key "jsonPointer": the engine drops it silently (did you mean "jsonPointers"?)`}},
		{name: "flux target", docs: docs, rules: []model.Rule{fluxKs("a").gk("", "Deployment").ptr("/spec/replicas").rule()},
			want: []string{`unknown key "target.nmae"`}},
		{name: "argocd-cm value", docs: docs, rules: []model.Rule{argoCM("apps_Deployment").gk("apps", "Deployment").rule()},
			want: []string{`unknown key "jqPathExpression"`}},
	})
}

func TestUnparsableFileIsOneFinding(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFile(t, root, "ok.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	testutil.WriteFile(t, root, "two-bad-docs.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\n- a list\n---\njust a string\n")
	testutil.WriteFile(t, root, "binary.yaml", "\x00\x01\x02\xff\xfe")
	testutil.WriteFile(t, root, "no-kind.json", "{\"apiVersion\": \"v1\",\n \"kind\": }\n")
	testutil.WriteFile(t, root, "README.md", "# not audited: not a manifest extension\n")
	// Not manifests, and valid YAML: skipped inside directories.
	testutil.WriteFile(t, root, "apps/kustomization.yaml", "resources: [../ok.yaml]\n")
	testutil.WriteFile(t, root, "apps/values.yaml", "replicaCount: 2\nimage: {tag: latest}\n")
	testutil.WriteFile(t, root, "charts/web/Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n")
	testutil.WriteFile(t, root, "charts/web/templates/deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n{{- if .Values.x }}\n")
	res, err := Run(Options{Root: root, Paths: []string{"."}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		if f.Check != auditapi.CheckUnparsableFile || f.Line < 1 {
			t.Errorf("unexpected finding %+v", f)
		}
		got = append(got, f.Position())
	}
	want := []string{"binary.yaml:1:1", "no-kind.json:1:1", "two-bad-docs.yaml:5:1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("positions %v, want %v\n%+v", got, want, res.Findings)
	}
	if res.Files != 6 || res.Manifests != 2 {
		t.Errorf("files %d manifests %d, want 6 and 2 (good documents of a bad file still count; the chart is skipped)", res.Files, res.Manifests)
	}
	// Named explicitly, a non-manifest is reported.
	res, err = Run(Options{Root: root, Paths: []string{"apps/values.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Position() != "apps/values.yaml:1:1" {
		t.Errorf("explicit values.yaml: %+v", res.Findings)
	}
}

func TestAdapterErrorsKeepTheirPosition(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFile(t, root, "flux/ks.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: a, namespace: flux-system}\nspec:\n  interval: 10m\n  ignore: not-a-list\n")
	res, err := Run(Options{Root: root, Paths: []string{"."}, Extractors: testExtractors(), Engines: testEngines()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Check != auditapi.CheckInvalid || res.Findings[0].Position() != "flux/ks.yaml:1" {
		t.Errorf("want one invalid finding at flux/ks.yaml:1, got %+v", res.Findings)
	}
}

// DRIFT001's severity follows the widest field hidden: /spec, a pod
// template, a container list, a whole object or every kind are errors; a
// kind-specific path on every kind and /metadata stay warnings.
func TestTooBroadSeverityFollowsTheWidestFieldHidden(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule model.Rule
		want Severity
	}{
		{"spec", argoApp("a").gk("apps", "Deployment").ptr("/spec").rule(), SeverityError},
		{"every kind spec", argoCM("all").gk("*", "*").ptr("/spec").rule(), SeverityError},
		{"pod template", argoApp("a").gk("apps", "Deployment").ptr("/spec/template").rule(), SeverityError},
		{"containers", fluxKs("a").gk("apps", "Deployment").ptr("/spec/template/spec/containers").rule(), SeverityError},
		{"whole object", fluxHR("a").gk("", "ConfigMap").whole().rule(), SeverityError},
		{"metadata", argoApp("a").gk("apps", "Deployment").jq(".metadata").rule(), SeverityWarning},
		{"replicas on every kind", argoCM("all").gk("*", "*").ptr("/spec/replicas").rule(), SeverityWarning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := only(runChecks(t, t.TempDir(), nil, nil, tc.rule), auditapi.CheckTooBroad)
			if len(got) != 1 || got[0].Severity != tc.want {
				t.Errorf("findings %+v, want one %s", got, tc.want)
			}
		})
	}
}

// An Application that installs a remote Helm chart has no manifests in the
// repository: its rules are "not checkable offline" (a note), not "matches
// nothing" (a warning).
func TestRemoteHelmChartRulesAreNotCheckableOffline(t *testing.T) {
	docs, err := source.Decode([]byte(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: lbc
  namespace: argocd
spec:
  source:
    repoURL: https://aws.github.io/eks-charts
    chart: aws-load-balancer-controller
`), "argocd/apps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := only(runChecks(t, t.TempDir(), nil, docs,
		argoApp("lbc").gk("admissionregistration.k8s.io", "MutatingWebhookConfiguration").ptr("/webhooks/0/clientConfig/caBundle").rule(),
		argoApp("other").gk("apps", "Deployment").ptr("/spec/replicas").rule()), auditapi.CheckMatchesNothing)
	if len(got) != 2 {
		t.Fatalf("findings %+v, want 2", got)
	}
	if got[0].Object != "Application argocd/lbc" {
		got[0], got[1] = got[1], got[0]
	}
	if got[0].Severity != SeverityNote || !strings.Contains(got[0].Message, "not checkable offline") || !strings.Contains(got[0].Message, "aws-load-balancer-controller") {
		t.Errorf("remote chart rule: %+v", got[0])
	}
	if got[1].Severity != SeverityWarning || !strings.Contains(got[1].Message, "no manifest") {
		t.Errorf("rule of an Application not in the repository: %+v", got[1])
	}
}

// Two argocd-cm files are two Argo CD instances: the same key in both is
// not a duplicate, and one instance's rule does not shadow the other's.
func TestArgoCDInstancesDoNotShadowEachOther(t *testing.T) {
	at := func(file, ptr string) model.Rule {
		r := argoCM("apps_Deployment").gk("apps", "Deployment").ptr(ptr).rule()
		r.Origin.File = file
		return r
	}
	cfg := noJustification()
	got := runChecks(t, t.TempDir(), cfg, nil, at("prod/argocd-cm.yaml", "/spec/replicas"), at("staging/argocd-cm.yaml", "/spec/replicas"),
		at("prod/argocd-cm.yaml", "/spec"), at("staging/argocd-cm.yaml", "/spec/template/metadata"))
	var rel []string
	for _, f := range got {
		if f.Check == auditapi.CheckDuplicate || f.Check == auditapi.CheckShadowed {
			rel = append(rel, f.File+": "+f.Message)
		}
	}
	// Only prod's /spec/replicas is covered by prod's /spec.
	if len(rel) != 1 || !strings.HasPrefix(rel[0], "prod/argocd-cm.yaml: rule is covered") {
		t.Errorf("shadow/duplicate findings %q, want only prod's /spec/replicas covered by prod's /spec", rel)
	}
}
