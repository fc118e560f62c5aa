package argocd

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// rulesOf is RulesFromDocuments of docs, none of which may fail.
func rulesOf(t *testing.T, docs []source.Document) []model.Rule {
	t.Helper()
	rules, errs := RulesFromDocuments(docs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return rules
}

// wantRuleLines fails the test unless the rules render (ruleLines) as want.
func wantRuleLines(t *testing.T, rules []model.Rule, want ...string) {
	t.Helper()
	if d := cmp.Diff(want, ruleLines(t, rules)); d != "" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
}

// ruleLines renders the rules that hide something as "origin | target |
// paths", sorted, leaving out the /status default of each instance.
func ruleLines(t *testing.T, rules []model.Rule) []string {
	t.Helper()
	var out []string
	for _, r := range rules {
		if r.Type == RuleCompareOptions {
			continue
		}
		if r.Error != "" {
			t.Errorf("rule %s: %s", r.Origin, r.Error)
		}
		line := r.Origin.Object + " " + r.Origin.Field + " @" + r.Origin.File + ":" + strconv.Itoa(r.Origin.Line) +
			" | " + r.Target.Group + "/" + r.Target.Kind + " | " + strings.Join(append(append(append([]string{}, r.JSONPointers...), r.JQPathExpressions...), r.Managers...), ",")
		if r.Scope == model.ScopeRefresh {
			line += " (refresh)"
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

func decodeAll(t *testing.T, files map[string]string) []source.Document {
	t.Helper()
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	var docs []source.Document
	for _, f := range names {
		d, err := source.Decode([]byte(files[f]), f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d...)
	}
	return docs
}

// Two argocd-cm files (one per environment): both instances' rules are
// kept, each with its own origin; before, only the last one read counted.
func TestSeveralArgoCDConfigMapsAreSeveralInstances(t *testing.T) {
	cm := func(ptr string) string {
		return `apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers:
    - ` + ptr + "\n"
	}
	docs := decodeAll(t, map[string]string{"prod/argocd-cm.yaml": cm("/spec/replicas"), "staging/argocd-cm.yaml": cm("/spec/template")})
	rules := rulesOf(t, docs)
	wantRuleLines(t, rules,
		"ConfigMap argocd/argocd-cm data[resource.customizations.ignoreDifferences.apps_Deployment] @prod/argocd-cm.yaml:7 | apps/Deployment | /spec/replicas",
		"ConfigMap argocd/argocd-cm data[resource.customizations.ignoreDifferences.apps_Deployment] @staging/argocd-cm.yaml:7 | apps/Deployment | /spec/template",
	)
	a, err := New(Options{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	if n := a.FileNotes(); len(n) != 1 || !strings.Contains(n[0].Message, "2 Argo CD settings (argocd-cm) read") || !strings.Contains(n[0].Message, "judged with the last one, ConfigMap argocd/argocd-cm (staging/argocd-cm.yaml)") {
		t.Errorf("notes %+v, want one saying which instance judges", n)
	}
	status := 0
	for _, r := range rules {
		if r.Type == RuleCompareOptions {
			status++
		}
	}
	if status != 2 {
		t.Errorf("%d /status rules, want one per instance (2)", status)
	}
}

// argocd-operator writes argocd-cm from the ArgoCD resource
// (controllers/argocd/configmap.go): all, resourceIdentifiers,
// resourceExclusions and extraConfig (which wins).
func TestArgoCDResourceRules(t *testing.T) {
	docs := decodeAll(t, map[string]string{"argocd.yaml": `apiVersion: argoproj.io/v1beta1
kind: ArgoCD
metadata:
  name: example
  namespace: gitops
spec:
  resourceIgnoreDifferences:
    all:
      jsonPointers:
      - /spec/replicas
    resourceIdentifiers:
    - group: apps
      kind: Deployment
      customization:
        jqPathExpressions:
        - .spec.template.spec.containers[].image
    - kind: Service
      customization:
        managedFieldsManagers:
        - kube-controller-manager
  resourceExclusions: |
    - apiGroups: [cilium.io]
      kinds: [CiliumIdentity]
  extraConfig:
    resource.customizations.ignoreResourceUpdates.ConfigMap: |
      jsonPointers:
      - /data
`})
	wantRuleLines(t, rulesOf(t, docs),
		"ArgoCD gitops/example spec.extraConfig[resource.customizations.ignoreResourceUpdates.ConfigMap] @argocd.yaml:25 | /ConfigMap | /data (refresh)",
		"ArgoCD gitops/example spec.resourceExclusions[0] @argocd.yaml:21 | cilium.io/CiliumIdentity | ",
		"ArgoCD gitops/example spec.resourceIgnoreDifferences.all @argocd.yaml:8 | */* | /spec/replicas",
		"ArgoCD gitops/example spec.resourceIgnoreDifferences.resourceIdentifiers[0] @argocd.yaml:12 | apps/Deployment | .spec.template.spec.containers[].image",
		"ArgoCD gitops/example spec.resourceIgnoreDifferences.resourceIdentifiers[1] @argocd.yaml:17 | /Service | kube-controller-manager",
	)
}

// The argo-cd chart writes configs.cm (less create and annotations) into
// argocd-cm: from a values file, a HelmRelease's spec.values and an
// Application's helm.valuesObject or values string.
func TestArgoCDChartValuesRules(t *testing.T) {
	docs := decodeAll(t, map[string]string{"hr.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: argo-cd
  namespace: argocd
spec:
  chart:
    spec:
      chart: argo-cd
  values:
    configs:
      cm:
        create: true
        resource.customizations.ignoreDifferences.apps_Deployment: |
          jsonPointers: [/spec/replicas]
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: argo-cd
  namespace: argocd
spec:
  destination:
    namespace: argocd
  source:
    chart: argo-cd
    helm:
      valuesObject:
        configs:
          cm:
            resource.customizations.ignoreDifferences.batch_Job: |
              jsonPointers: [/spec/suspend]
      values: |
        configs:
          cm:
            resource.customizations.ignoreDifferences.ConfigMap: |
              jsonPointers: [/data]
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: other-chart
  namespace: argocd
spec:
  source:
    chart: podinfo
    helm:
      valuesObject:
        configs:
          cm:
            resource.customizations.ignoreDifferences.Secret: |
              jsonPointers: [/data]
`})
	dir := t.TempDir()
	values := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(values, []byte(`global:
  domain: argocd.example.com
configs:
  cm:
    annotations: {}
    resource.exclusions: |
      - kinds: [ProviderConfigUsage]
        apiGroups: ["*"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	vd, err := ValuesFileDocuments(values)
	if err != nil {
		t.Fatal(err)
	}
	rules := rulesOf(t, append(docs, vd...))
	for i := range rules {
		rules[i].Origin.File = strings.TrimPrefix(rules[i].Origin.File, dir+string(filepath.Separator))
	}
	wantRuleLines(t, rules,
		"Application argocd/argo-cd spec.source.helm.values: configs.cm[resource.customizations.ignoreDifferences.ConfigMap] @hr.yaml:33 | /ConfigMap | /data",
		"Application argocd/argo-cd spec.source.helm.valuesObject.configs.cm[resource.customizations.ignoreDifferences.batch_Job] @hr.yaml:31 | batch/Job | /spec/suspend",
		"HelmRelease argocd/argo-cd spec.values.configs.cm[resource.customizations.ignoreDifferences.apps_Deployment] @hr.yaml:14 | apps/Deployment | /spec/replicas",
		"argo-cd chart values configs.cm[resource.exclusions][0] @values.yaml:6 | */ProviderConfigUsage | ",
	)
}

// An umbrella chart's values for its argo-cd dependency are read; another
// chart's configs.cm is not an argocd-cm.
func TestValuesFilesOfUmbrellaAndOtherCharts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	umbrella := write("values.yaml", "argo-cd:\n  configs:\n    cm:\n      resource.customizations.ignoreDifferences.apps_Deployment: |\n        jsonPointers: [/spec/replicas]\n")
	other := write("values-other.yaml", "configs:\n  cm:\n    logLevel: debug\n")
	docs, err := ValuesFileDocuments(umbrella)
	if err != nil || len(docs) != 1 {
		t.Fatalf("umbrella values: %d documents, %v", len(docs), err)
	}
	rules, _ := RulesFromDocuments(docs)
	got := ruleLines(t, rules)
	want := []string{"argo-cd chart values argo-cd.configs.cm[resource.customizations.ignoreDifferences.apps_Deployment] @" + umbrella + ":4 | apps/Deployment | /spec/replicas"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("umbrella rules (-want +got):\n%s", d)
	}
	if docs, _ := ValuesFileDocuments(other); len(docs) != 0 {
		t.Errorf("another chart's configs.cm read as argocd-cm: %v", docs)
	}
}

// A values file is read through source's bounded reader: one over the
// limit is refused with source's error, not read.
func TestValuesFileOverLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "values.yaml")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size is what counts, nothing is written.
	if err := f.Truncate(source.DefaultMaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var le *source.LimitError
	if _, err := ValuesFileDocuments(p); !errors.As(err, &le) {
		t.Errorf("ValuesFileDocuments of a file over the limit: %v, want source's LimitError", err)
	}
}
