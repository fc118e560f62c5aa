package compare

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ruleB builds test rules without struct literals everywhere.
type ruleB struct{ r model.Rule }

var ruleSeq int

func argo(group, kind string) *ruleB {
	ruleSeq++
	return &ruleB{model.Rule{Engine: model.Engine("argocd"), Type: "argocd.ignoreDifferences", Scope: model.ScopeDiff,
		Origin: model.Origin{File: "argo.yaml", Line: ruleSeq}, Target: model.Selector{Group: group, Kind: kind, Syntax: model.MatchGlob}}}
}

func flux(group, kind string) *ruleB {
	ruleSeq++
	return &ruleB{model.Rule{Engine: model.Engine("flux"), Type: "flux.kustomization.ignore", Scope: model.ScopeDiffAndApply,
		Origin: model.Origin{File: "flux.yaml", Line: ruleSeq}, Target: model.Selector{Group: group, Kind: kind, Syntax: model.MatchRegex}}}
}

func (b *ruleB) name(n string) *ruleB   { b.r.Target.Name = n; return b }
func (b *ruleB) ns(n string) *ruleB     { b.r.Target.Namespace = n; return b }
func (b *ruleB) labels(s string) *ruleB { b.r.Target.LabelSelector = s; return b }
func (b *ruleB) ptr(p ...string) *ruleB { b.r.JSONPointers = append(b.r.JSONPointers, p...); return b }
func (b *ruleB) jq(e ...string) *ruleB {
	b.r.JQPathExpressions = append(b.r.JQPathExpressions, e...)
	return b
}
func (b *ruleB) managers(m ...string) *ruleB { b.r.Managers = append(b.r.Managers, m...); return b }
func (b *ruleB) typ(t model.RuleType) *ruleB { b.r.Type = t; return b }
func (b *ruleB) scope(s model.Scope) *ruleB  { b.r.Scope = s; return b }
func (b *ruleB) V() model.Rule               { return b.r }

func statusOf(t *testing.T, c *Comparison, r model.Rule) Result {
	t.Helper()
	for _, res := range c.Results {
		if res.Rule.Engine == r.Engine && res.Rule.Origin == r.Origin {
			return res
		}
	}
	t.Fatalf("no result for %v", r.Origin)
	return Result{}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		name  string
		rules []model.Rule
		// want is the status of rules[0].
		want   Status
		reason string // substring of some reason or difference
	}{
		{"equivalent deployment replicas",
			[]model.Rule{argo("apps", "Deployment").ptr("/spec/replicas").V(), flux("apps", "Deployment").ptr("/spec/replicas").V()},
			Equivalent, ""},
		{"jq pure path equals pointer",
			[]model.Rule{argo("apps", "Deployment").jq(".spec.replicas").V(), flux("apps", "Deployment").ptr("/spec/replicas").V()},
			Equivalent, ""},
		{"glob star equals empty flux target",
			[]model.Rule{argo("*", "*").ptr("/metadata/annotations/x").V(), flux("", "").ptr("/metadata/annotations/x").V()},
			Equivalent, ""},
		{"glob equals regex by language",
			[]model.Rule{argo("{apps,batch}", "*").ptr("/spec/x").V(), flux("apps|batch", ".*").ptr("/spec/x").V()},
			Equivalent, ""},
		{"flux paths split over two rules",
			[]model.Rule{argo("apps", "Deployment").ptr("/spec/replicas", "/spec/template/metadata/annotations").V(),
				flux("apps", "Deployment").ptr("/spec/replicas").V(), flux("apps", "Deployment").ptr("/spec/template/metadata/annotations").V()},
			Equivalent, ""},
		{"argo core group is narrower than flux empty group",
			[]model.Rule{argo("", "Service").ptr("/spec/clusterIP").V(), flux("", "Service").ptr("/spec/clusterIP").V()},
			Partial, `Flux rule matches any group, Argo CD rule only group "" (the core group)`},
		{"flux core group ^$ equals argo empty group",
			[]model.Rule{argo("", "Service").ptr("/spec/clusterIP").V(), flux("^$", "Service").ptr("/spec/clusterIP").V()},
			Equivalent, ""},
		{"flux narrower by name regex",
			[]model.Rule{argo("apps", "Deployment").ptr("/spec/replicas").V(), flux("apps", "Deployment").name("web-.*").ptr("/spec/replicas").V()},
			Partial, `Argo CD rule matches any name, Flux rule only name "web-.*"`},
		{"fewer paths",
			[]model.Rule{argo("apps", "Deployment").ptr("/spec/replicas", "/spec/paused").V(), flux("apps", "Deployment").ptr("/spec/replicas").V()},
			Partial, "only the Argo CD rule removes /spec/paused"},
		{"only argocd",
			[]model.Rule{argo("apps", "Deployment").ptr("/spec/replicas").V(), flux("batch", "Job").ptr("/spec/replicas").V()},
			Only(model.Engine("argocd")), ""},
		{"only flux",
			[]model.Rule{flux("apps", "Deployment").ptr("/spec/replicas").V()},
			Only(model.Engine("flux")), ""},
		{"managers untranslatable",
			[]model.Rule{argo("apps", "Deployment").managers("kube-controller-manager").V(), flux("apps", "Deployment").ptr("/spec/replicas").V()},
			Untranslatable, "managedFieldsManagers kube-controller-manager: managedFieldsManagers has no Flux equivalent"},
		{"jq select by value untranslatable",
			[]model.Rule{argo("apps", "Deployment").jq(`.spec.template.spec.containers[] | select(.name == "istio-proxy") | .image`).V()},
			Untranslatable, "selects array items by value"},
		{"resource exclusion untranslatable",
			[]model.Rule{argo("cilium.io", "CiliumIdentity").typ("argocd.resourceExclusion").scope(model.ScopeDiscovery).V()},
			Untranslatable, "resource.exclusions hides resources"},
		{"flux label selector untranslatable without counterpart",
			[]model.Rule{flux("apps", "Deployment").labels("autoscaling=hpa").ptr("/spec/replicas").V()},
			Untranslatable, "cannot select objects by labels"},
		{"flux label selector partial with broader counterpart",
			[]model.Rule{flux("apps", "Deployment").labels("autoscaling=hpa").ptr("/spec/replicas").V(), argo("apps", "Deployment").ptr("/spec/replicas").V()},
			Partial, `only selects objects with labelSelector "autoscaling=hpa"`},
		{"managers plus pointers is partial",
			[]model.Rule{argo("apps", "Deployment").ptr("/spec/replicas").managers("hpa").V(), flux("apps", "Deployment").ptr("/spec/replicas").V()},
			Partial, "managedFieldsManagers hpa"},
		{"jq iteration vs one index",
			[]model.Rule{argo("admissionregistration.k8s.io", "MutatingWebhookConfiguration").jq(".webhooks[]?.clientConfig.caBundle").V(),
				flux(`admissionregistration\.k8s\.io`, "MutatingWebhookConfiguration").ptr("/webhooks/0/clientConfig/caBundle").V()},
			Partial, "only the Argo CD rule removes /webhooks/*/clientConfig/caBundle"},
		{"unescaped dot is broader",
			[]model.Rule{argo("networking.k8s.io", "Ingress").ptr("/spec/rules").V(), flux("networking.k8s.io", "Ingress").ptr("/spec/rules").V()},
			Partial, "Flux rule matches group"},
		{"invalid pointer",
			[]model.Rule{argo("apps", "Deployment").ptr("spec/replicas").V()},
			Invalid, "must start with '/'"},
		{"flux whole object",
			[]model.Rule{flux("", "Secret").ptr("").V()},
			Untranslatable, "whole object"},
		{"refresh-only rule",
			[]model.Rule{argo("*", "*").ptr("/status").scope(model.ScopeRefresh).V()},
			Untranslatable, "ignoreResourceUpdates"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := statusOf(t, Compare(c.rules, nil, Options{Engines: testEngines}), c.rules[0])
			if got.Status != c.want {
				t.Fatalf("status %s want %s: %+v", got.Status, c.want, got)
			}
			if c.reason != "" {
				all := strings.Join(got.Reasons, "\n")
				for _, cp := range got.Counterparts {
					all += "\n" + strings.Join(cp.Differences, "\n")
				}
				if !strings.Contains(all, c.reason) {
					t.Fatalf("no %q in:\n%s", c.reason, all)
				}
			}
		})
	}
}

func TestCompareSymmetric(t *testing.T) {
	rules := []model.Rule{argo("apps", "Deployment").ptr("/spec/replicas").V(), flux("apps", "Deployment").ptr("/spec/replicas").V()}
	c := Compare(rules, nil, Options{Engines: testEngines})
	if c.Summary[Equivalent] != 2 {
		t.Fatalf("both sides should be equivalent: %+v", c.Summary)
	}
	if c.Results[0].Counterparts[0].Origin != rules[1].Origin {
		t.Fatalf("argo result should point at the flux rule: %+v", c.Results[0])
	}
}

func obj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns}}}
	for k, v := range fields {
		o.Object[k] = v
	}
	return o
}

func TestEffect(t *testing.T) {
	dep := obj("apps/v1", "Deployment", "shop", "web", map[string]any{"spec": map[string]any{
		"replicas": int64(3),
		"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "app", "image": "app:1"},
			map[string]any{"name": "istio-proxy", "image": "proxy:1"},
		}}},
	}})
	ksvc := obj("serving.knative.dev/v1", "Service", "shop", "web", map[string]any{"spec": map[string]any{"clusterIP": "x"}})
	svc := obj("v1", "Service", "shop", "web", map[string]any{"spec": map[string]any{"clusterIP": "10.0.0.1"}})
	rules := []model.Rule{
		argo("apps", "Deployment").jq(`.spec.template.spec.containers[] | select(.name == "istio-proxy") | .image`).V(),
		flux("apps", "Deployment").ptr("/spec/template/spec/containers/1/image").V(),
		argo("", "Service").ptr("/spec/clusterIP").V(),
		flux("", "Service").ptr("/spec/clusterIP").V(),
	}
	c := Compare(rules, []*unstructured.Unstructured{dep, ksvc, svc}, Options{Engines: testEngines})
	sel := statusOf(t, c, rules[0])
	if sel.Status != Untranslatable {
		t.Fatalf("select rule: %s", sel.Status)
	}
	if got := strings.Join(sel.Effect.Fields, ","); got != "Deployment.apps shop/web /spec/template/spec/containers/1/image" {
		t.Fatalf("select effect: %s", got)
	}
	core := statusOf(t, c, rules[2])
	if core.Status != Partial || core.Effect.SameAsCounterparts {
		t.Fatalf("core service: %+v", core)
	}
	if got := strings.Join(core.Effect.OnlyCounterparts, ","); got != "Service.serving.knative.dev shop/web /spec/clusterIP" {
		t.Fatalf("knative service should be ignored by Flux only: %q", got)
	}
	var found bool
	for _, oe := range c.Objects {
		if oe.Object.Group == "serving.knative.dev" {
			found = true
			if len(oe.Only[model.Engine("flux")]) != 1 || len(oe.Ignored[model.Engine("argocd")]) != 0 {
				t.Fatalf("knative object effect: %+v", oe)
			}
		}
	}
	if !found {
		t.Fatal("no object effect for the Knative Service")
	}
	// Translating with the objects expands the select to its pointer.
	tr := translateT(t, rules[:1], model.Engine("flux"), []*unstructured.Unstructured{dep})
	if len(tr) != 1 || len(tr[0].To) != 1 || tr[0].To[0].JSONPointers[0] != "/spec/template/spec/containers/1/image" || len(tr[0].Lossy) != 1 {
		t.Fatalf("expansion: %+v", tr)
	}
}

func TestTranslateArgoToFlux(t *testing.T) {
	rules := []model.Rule{
		argo("", "Service").ptr("/spec/clusterIP").V(),
		argo("*", "*").jq(`.metadata.labels["x"]`).V(),
		argo("*.example.com", "Widget").name("a.b").ns("team-a").ptr("/spec/size").V(),
		argo("apps", "Deployment").managers("hpa").V(),
	}
	tr := translateT(t, rules, model.Engine("flux"), nil)
	if len(tr) != 4 {
		t.Fatalf("got %d translations", len(tr))
	}
	want := []model.Selector{
		{Group: "^$", Kind: "Service", Syntax: model.MatchRegex},
		{Syntax: model.MatchRegex},
		{Group: `.*\.example\.com`, Kind: "Widget", Name: `a\.b`, Namespace: "team-a", Syntax: model.MatchRegex},
	}
	for i, w := range want {
		if len(tr[i].To) != 1 || tr[i].To[0].Target != w {
			t.Errorf("rule %d: %+v want target %+v", i, tr[i].To, w)
		}
	}
	if tr[1].To[0].JSONPointers[0] != "/metadata/labels/x" {
		t.Errorf("jq path: %v", tr[1].To[0].JSONPointers)
	}
	if len(tr[3].To) != 0 || len(tr[3].Untranslatable) != 1 {
		t.Errorf("managers: %+v", tr[3])
	}
	// Every translation must compare as equivalent to its source.
	var both []model.Rule
	for i, x := range tr[:3] {
		both = append(both, rules[i])
		fr := x.To[0]
		fr.Origin = model.Origin{File: "translated.yaml", Line: i + 1}
		both = append(both, fr)
	}
	c := Compare(both, nil, Options{Engines: testEngines})
	for _, r := range c.Results {
		if r.Status != Equivalent {
			t.Errorf("%s %v: %s %+v", r.Rule.Engine, r.Rule.Origin, r.Status, r.Counterparts)
		}
	}
}

func TestTranslateFluxToArgo(t *testing.T) {
	rules := []model.Rule{
		flux("", "").ptr("/metadata/annotations/x").V(),
		flux("^$", "Secret").name("(db|cache)-creds").ptr("/data").V(),
		flux("networking.k8s.io", "Ingress").ptr("/spec").V(),
		flux("apps", "Deployment").name("web-.*").ptr("/spec/replicas").V(),
		flux("apps", "Deployment").labels("a=b").ptr("/spec/replicas").V(),
	}
	tr := translateT(t, rules, model.Engine("argocd"), nil)
	if got := tr[0].To[0].Target; got.Group != "*" || got.Kind != "*" {
		t.Errorf("empty flux target: %+v", got)
	}
	if len(tr[1].To) != 2 || tr[1].To[0].Target.Name != "cache-creds" || tr[1].To[1].Target.Name != "db-creds" || tr[1].To[0].Target.Group != "" {
		t.Errorf("finite names: %+v", tr[1].To)
	}
	if len(tr[2].To) != 1 || tr[2].To[0].Target.Group != "networking.k8s.io" || len(tr[2].Lossy) != 1 {
		t.Errorf("dotted group: %+v", tr[2])
	}
	if len(tr[3].To) != 0 || len(tr[3].Untranslatable) != 1 {
		t.Errorf("infinite names: %+v", tr[3])
	}
	if len(tr[4].To) != 0 || !strings.Contains(strings.Join(tr[4].Untranslatable, ""), "labelSelector") {
		t.Errorf("labels: %+v", tr[4])
	}
}

func TestEffectRespectsOwnerScope(t *testing.T) {
	mine := obj("apps/v1", "Deployment", "shop", "web", map[string]any{"spec": map[string]any{"replicas": int64(2)}})
	theirs := obj("apps/v1", "Deployment", "other", "web", map[string]any{"spec": map[string]any{"replicas": int64(2)}})
	plain := obj("apps/v1", "Deployment", "git", "web", map[string]any{"spec": map[string]any{"replicas": int64(2)}})
	appRule := argo("apps", "Deployment").ptr("/spec/replicas").V()
	appRule.Origin.Object = "Application argocd/shop"
	cmRule := argo("apps", "Deployment").ptr("/spec/replicas").V()
	cmRule.Origin.Object = "ConfigMap argocd/argocd-cm"
	owners := func(o *unstructured.Unstructured) []model.Owner {
		switch o.GetNamespace() {
		case "shop":
			return []model.Owner{{Engine: model.Engine("argocd"), Kind: "Application", Namespace: "argocd", Name: "shop"}}
		case "other":
			return []model.Owner{{Engine: model.Engine("argocd"), Kind: "Application", Namespace: "argocd", Name: "other"}}
		}
		return nil
	}
	c := Compare([]model.Rule{appRule, cmRule}, []*unstructured.Unstructured{mine, theirs, plain}, Options{Engines: testEngines, Owners: owners})
	got := map[string]string{}
	for _, r := range c.Results {
		got[r.Rule.Origin.Object] = strings.Join(r.Effect.Fields, ",")
	}
	if want := "Deployment.apps shop/web /spec/replicas,Deployment.apps git/web /spec/replicas"; got["Application argocd/shop"] != want {
		t.Errorf("Application rule effect %q, want %q (not the other Application's object)", got["Application argocd/shop"], want)
	}
	if n := strings.Count(got["ConfigMap argocd/argocd-cm"], "/spec/replicas"); n != 3 {
		t.Errorf("argocd-cm rule applies to every object: %q", got["ConfigMap argocd/argocd-cm"])
	}
}

func TestEffectJQTimeoutCostsOnce(t *testing.T) {
	var objs []*unstructured.Unstructured
	for i := 0; i < 5; i++ {
		objs = append(objs, obj("apps/v1", "Deployment", "ns", fmt.Sprintf("d%d", i), map[string]any{"spec": map[string]any{}}))
	}
	r := argo("apps", "Deployment").jq("until(false; .)").V()
	c := Compare([]model.Rule{r}, objs, Options{Engines: testEngines})
	// The first object hits the limit; the expression is then skipped for
	// the others (the note names only the first).
	notes := c.Results[0].Effect.Notes
	if len(notes) != 1 || !strings.Contains(notes[0], "exceeded Argo CD's 1s limit on Deployment.apps ns/d0") {
		t.Fatalf("notes: %q", notes)
	}
}

func TestEffectOfManagersRule(t *testing.T) {
	dep := obj("apps/v1", "Deployment", "shop", "web", map[string]any{"spec": map[string]any{"replicas": int64(5), "paused": false}})
	dep.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`), Subresource: "scale"},
		{Manager: "argocd-controller", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:paused":{}}}`)},
	})
	r := argo("apps", "Deployment").managers("kube-controller-manager").V()
	c := Compare([]model.Rule{r}, []*unstructured.Unstructured{dep}, Options{Engines: testEngines})
	eff := c.Results[0].Effect
	if got := strings.Join(eff.Fields, ","); got != "Deployment.apps shop/web /spec/replicas" {
		t.Fatalf("fields owned by the trusted manager: %q", got)
	}
	if c.Results[0].Status != Untranslatable {
		t.Fatalf("status %s", c.Results[0].Status)
	}
}

// Two argocd-cm files are two Argo CD instances: a Flux rule is equivalent
// only to what one instance (with the Applications' rules) removes, not to
// the sum of both.
func TestTwoArgoCDInstancesDoNotAddUp(t *testing.T) {
	cm := func(file, ptr string) model.Rule {
		r := argo("apps", "Deployment").ptr(ptr).V()
		r.Origin.File, r.Origin.Object, r.Origin.Field = file, "ConfigMap argocd/argocd-cm", "data[resource.customizations.ignoreDifferences.apps_Deployment]"
		return r
	}
	f := flux("apps", "Deployment").ptr("/spec/replicas", "/spec/paused").V()
	c := Compare([]model.Rule{f, cm("prod/argocd-cm.yaml", "/spec/replicas"), cm("staging/argocd-cm.yaml", "/spec/paused")}, nil, Options{Engines: testEngines})
	if got := statusOf(t, c, f).Status; got != Partial {
		t.Errorf("status %s, want partial: no single instance removes both paths", got)
	}
	app := argo("apps", "Deployment").ptr("/spec/paused").V()
	app.Origin.Object = "Application argocd/web"
	c = Compare([]model.Rule{f, cm("prod/argocd-cm.yaml", "/spec/replicas"), app}, nil, Options{Engines: testEngines})
	if got := statusOf(t, c, f).Status; got != Equivalent {
		t.Errorf("status %s, want equivalent: the instance plus the Application's rule remove both", got)
	}
}

func TestObjectEffectJSONRoundTrip(t *testing.T) {
	in := ObjectEffect{
		Object:  model.ResourceID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"},
		Ignored: map[model.Engine][]string{model.Engine("argocd"): {"/spec/replicas"}, model.Engine("flux"): {"/spec/paused", "/spec/replicas"}, "toy": {"/metadata/labels/team"}},
		Only:    map[model.Engine][]string{model.Engine("flux"): {"/spec/paused"}, "toy": {"/metadata/labels/team"}},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"object":{"group":"apps","version":"v1","kind":"Deployment","namespace":"shop","name":"web"},` +
		`"argocd":["/spec/replicas"],"flux":["/spec/paused","/spec/replicas"],"toy":["/metadata/labels/team"],` +
		`"onlyFlux":["/spec/paused"],"onlyToy":["/metadata/labels/team"]}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	var out ObjectEffect
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("round trip %+v, want %+v", out, in)
	}
	if n := in.Common([]model.Engine{model.Engine("argocd"), model.Engine("flux")}); n != 1 {
		t.Errorf("common to Argo CD and Flux: %d, want 1", n)
	}
	if n := in.Common([]model.Engine{model.Engine("argocd"), model.Engine("flux"), "toy"}); n != 0 {
		t.Errorf("common to all three: %d, want 0", n)
	}
}
