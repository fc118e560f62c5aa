package argocd

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

const rulesYAML = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: shop
  namespace: argocd
spec:
  ignoreDifferences:
  - group: app
    kind: Deployment
    jsonPointers:
    - /spec/replicas
  - group: ""
    kind: ConfigMap
    jqPathExpressions:
    - .data[
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    managedFieldsManagers:
    - kube-controller-manager
  resource.exclusions: |
    - apiGroups: [cilium.io]
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: envs
  namespace: argocd
spec:
  template:
    metadata:
      name: '{{name}}'
    spec:
      ignoreDifferences:
      - kind: Secret
        jsonPointers: [/data]
`

func TestRulesFromDocuments(t *testing.T) {
	docs, err := source.Decode([]byte(rulesYAML), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules, errs := RulesFromDocuments(docs)
	if len(errs) != 0 {
		t.Fatalf("errs = %v", errs)
	}
	byField := map[string]model.Rule{}
	for _, r := range rules {
		byField[r.Origin.Object+" "+r.Origin.Field] = r
	}
	check := func(key string, line, col int, wantErr bool) model.Rule {
		t.Helper()
		r, ok := byField[key]
		if !ok {
			t.Fatalf("no rule %q in %v", key, keys(byField))
		}
		if r.Origin.File != "rules.yaml" || r.Origin.Line != line || r.Origin.Column != col {
			t.Errorf("%s: origin %+v, want rules.yaml:%d:%d", key, r.Origin, line, col)
		}
		if (r.Error != "") != wantErr {
			t.Errorf("%s: error %q", key, r.Error)
		}
		return r
	}
	r := check("Application argocd/shop .spec.ignoreDifferences[0]", 8, 5, false)
	if r.Target.Group != "app" || r.Target.Syntax != model.MatchGlob || r.JSONPointers[0] != "/spec/replicas" {
		t.Errorf("rule = %+v", r)
	}
	check("Application argocd/shop .spec.ignoreDifferences[1]", 12, 5, true)
	r = check("ConfigMap argocd/argocd-cm data[resource.customizations.ignoreDifferences.apps_Deployment]", 23, 3, false)
	if r.Managers[0] != "kube-controller-manager" {
		t.Errorf("rule = %+v", r)
	}
	r = check("ConfigMap argocd/argocd-cm data[resource.exclusions][0]", 26, 3, false)
	if r.Type != RuleResourceExclusion || !r.WholeResource || r.Target.Group != "cilium.io" {
		t.Errorf("rule = %+v", r)
	}
	check("ApplicationSet argocd/envs .spec.template.spec.ignoreDifferences[0]", 40, 9, false)
	if _, ok := byField["ConfigMap argocd/argocd-cm data[resource.compareoptions].ignoreResourceStatusField (default all)"]; !ok {
		t.Errorf("default status rule of the file's argocd-cm missing: %v", keys(byField))
	}
}

func keys(m map[string]model.Rule) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, "\n")
}

// Without an argocd-cm (absent, Forbidden, unreachable, offline) the /status
// rule is Argo CD's built-in default and says so, instead of citing a
// ConfigMap that was never read (issue 12).
func TestDefaultStatusRuleIsMarkedDefault(t *testing.T) {
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := a.Rules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, r := range rules {
		if r.Type != RuleCompareOptions {
			continue
		}
		found = true
		if r.Origin.Object != BuiltinDefaultOrigin || strings.Contains(r.Origin.String(), "ConfigMap") {
			t.Errorf("default status rule origin %q, want %q", r.Origin.String(), BuiltinDefaultOrigin)
		}
	}
	if !found {
		t.Error("no compareOptions status rule")
	}
}
