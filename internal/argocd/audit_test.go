package argocd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// The rules audit reads from real manifests: what each counts as and how
// they reach each other.
func TestAuditSemanticsOfExtractedRules(t *testing.T) {
	docs := testutil.Documents(t, "argocd/all.yaml", `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.exclusions: |
    - apiGroups: ["cilium.io"]
      kinds: ["CiliumIdentity"]
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers: [/spec/replicas]
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  ignoreDifferences:
  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}
`)
	rules, errs := RulesFromDocuments(docs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	byKind := map[auditapi.Kind][]model.Rule{}
	for _, r := range rules {
		byKind[AuditSemantics().Kinds[r.Type]] = append(byKind[AuditSemantics().Kinds[r.Type]], r)
	}
	if len(byKind[auditapi.Exclusion]) != 1 || len(byKind[auditapi.Field]) != 2 {
		t.Fatalf("kinds %v, want one exclusion and two field rules", byKind)
	}
	cm, app := byKind[auditapi.Field][0], byKind[auditapi.Field][1]
	if !isGlobalRule(cm) {
		cm, app = app, cm
	}
	if !isGlobalRule(cm) || isGlobalRule(app) {
		t.Fatalf("global: argocd-cm %v, Application %v", isGlobalRule(cm), isGlobalRule(app))
	}
	if got := auditReach(cm, app); got != auditapi.Same {
		t.Errorf("argocd-cm rule reaches the Application's objects: got %v", got)
	}
	if got := auditReach(app, cm); got != auditapi.Apart {
		t.Errorf("an Application rule does not reach argocd-cm's scope: got %v", got)
	}
	other := cm
	other.Origin.File = "staging/argocd-cm.yaml"
	if got := auditReach(other, cm); got != auditapi.Apart {
		t.Errorf("two argocd-cm files are two instances: got %v", got)
	}
	otherApp := app
	otherApp.Origin.Object = "Application argocd/web"
	if got := auditReach(otherApp, app); got != auditapi.Apart {
		t.Errorf("two Applications: got %v", got)
	}
}

func TestAuditUnknownKey(t *testing.T) {
	docs := testutil.Documents(t, "argocd/apps.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a, namespace: argocd}
spec:
  ignoreDifferences:
  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}
  - {group: apps, kind: Deployment, jsonPointer: [/spec/paused]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jqPathExpression: [.spec.replicas]
`)
	app := model.Rule{Type: RuleIgnoreDifferences, Origin: model.Origin{Object: "Application argocd/a"}}
	cm := model.Rule{Type: RuleIgnoreDifferences, Origin: model.Origin{Object: "ConfigMap argocd/argocd-cm",
		Field: "data[resource.customizations.ignoreDifferences.apps_Deployment]"}}
	tests := []struct {
		name  string
		r     model.Rule
		field string
		doc   source.Document
		want  string
	}{
		{"known keys", app, ".spec.ignoreDifferences[0]", docs[0], ""},
		{"misspelt key", app, ".spec.ignoreDifferences[1]", docs[0], `unknown key "jsonPointer": the engine drops it silently (did you mean "jsonPointers"?)`},
		{"argocd-cm value", cm, cm.Origin.Field, docs[1], `unknown key "jqPathExpression"`},
		{"other rule types are not read", model.Rule{Type: RuleResourceExclusion}, ".spec.ignoreDifferences[1]", docs[0], ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			r.Origin.Field = tc.field
			got := unknownKey(r, tc.doc)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// auditApps holds Applications and an ApplicationSet with and without
// remote charts and self-heal.
const auditApps = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: lbc}
spec:
  sources:
  - {repoURL: https://github.com/example/values}
  - {repoURL: https://aws.github.io/eks-charts, chart: aws-load-balancer-controller}
  syncPolicy:
    automated: {prune: true}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: envs, namespace: argocd}
spec:
  template:
    spec:
      source: {repoURL: https://charts.example.com, chart: podinfo}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: git, namespace: argocd}
spec:
  source: {repoURL: https://github.com/example/apps, path: shop}
  syncPolicy:
    automated: {selfHeal: true}
`

func TestAuditRemoteChart(t *testing.T) {
	docs := testutil.Documents(t, "argocd/apps.yaml", auditApps)
	find := func(o model.Origin) (source.Document, bool) {
		for _, d := range docs {
			if d.File == o.File && auditapi.ObjectOf(d.Object) == o.Object {
				return d, true
			}
		}
		return source.Document{}, false
	}
	for object, want := range map[string]string{
		// Applications without a namespace are cited in Argo CD's.
		"Application argocd/lbc":     "the remote Helm chart aws-load-balancer-controller",
		"ApplicationSet argocd/envs": "the remote Helm chart podinfo",
		"Application argocd/git":     "",
		"Application argocd/gone":    "",
	} {
		r := model.Rule{Origin: model.Origin{File: "argocd/apps.yaml", Object: object}}
		if got := remoteChart(r, auditapi.Tree{Find: find}); got != want {
			t.Errorf("%s: got %q, want %q", object, got, want)
		}
	}
}

func TestAuditSelfHeal(t *testing.T) {
	docs := testutil.Documents(t, "argocd/apps.yaml", auditApps)
	if got := checkSelfHeal(auditapi.Input{Documents: docs}); len(got) != 0 {
		t.Errorf("without the policy: %+v", got)
	}
	got := checkSelfHeal(auditapi.Input{Documents: docs, Policy: auditapi.Policy{RequireSelfHeal: true}})
	var pos []string
	for _, f := range got {
		pos = append(pos, fmt.Sprintf("%s@%s:%d:%d %s", f.Object, f.File, f.Line, f.Column, f.Field))
	}
	// At the sync policy when there is one, else at the document.
	want := []string{
		"Application lbc@argocd/apps.yaml:8:3 .spec.syncPolicy.automated.selfHeal",
		"ApplicationSet argocd/envs@argocd/apps.yaml:11:1 .spec.template.spec.syncPolicy.automated.selfHeal",
	}
	if strings.Join(pos, ",") != strings.Join(want, ",") {
		t.Errorf("got %q, want %q", pos, want)
	}
}
