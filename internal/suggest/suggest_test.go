package suggest

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
)

// The neutral machinery, with two made-up engines ("a" writes its rules
// under spec.rules and needs an option; "b" only suggests for labels).
// The shipped engines' rules are tested with them (internal/argocd,
// internal/flux suggest_test.go), the toy engine's through the command
// (plugins/kubectl-drift/toy_engine_test.go).

type ruleA struct {
	Path string `json:"path"`
}

func (r ruleA) Entry() any { return suggestapi.Entry(&r) }
func (r ruleA) Settings() []suggestapi.Setting {
	return []suggestapi.Setting{{Path: []string{"spec", "options"}, Value: "Keep=true", Has: func(o string) bool { return strings.EqualFold(o, "keep=true") }}}
}

type ruleB struct {
	Label string `json:"label"`
}

func (r ruleB) Entry() any                     { return suggestapi.Entry(&r) }
func (r ruleB) Settings() []suggestapi.Setting { return nil }

func engines() []suggestapi.Semantics {
	return []suggestapi.Semantics{
		{Engine: "a", Title: "A", Holders: []suggestapi.Holder{{GVK: schema.GroupVersionKind{Group: "a.example.com", Version: "v1", Kind: "AApp"}, Rules: []string{"spec", "rules"}}},
			Suggest: func(f suggestapi.Field) (suggestapi.Rule, []string) {
				return ruleA{Path: f.Drift.Path}, []string{"a says " + f.Drift.Path}
			}},
		{Engine: "b", Title: "B", Holders: []suggestapi.Holder{{GVK: schema.GroupVersionKind{Group: "b.example.com", Version: "v1", Kind: "BApp"}, Rules: []string{"spec", "labels"}}},
			Suggest: func(f suggestapi.Field) (suggestapi.Rule, []string) {
				if k, ok := strings.CutPrefix(f.Drift.Path, "/metadata/labels/"); ok {
					return ruleB{Label: k}, nil
				}
				return nil, nil
			}},
	}
}

func report() *model.Report {
	r := model.NewReport(model.ResourceID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, model.SourceFile)
	r.Drifts = []model.FieldDrift{
		// Scaled by an HPA, reverted by an engine: suggested.
		{Path: "/spec/replicas", FieldPath: ".spec.replicas", Change: model.Changed, Cause: model.CauseAutoscaler,
			Managers: []model.ManagerRef{{Manager: "kube-controller-manager", Operation: "Update", Subresource: "scale"}},
			Verdicts: []model.Verdict{{Engine: "a", Kind: model.Reverted}}},
		// A label an operator added, not judged yet: suggested.
		{Path: "/metadata/labels/team", FieldPath: ".metadata.labels.team", Change: model.Added, Cause: model.CauseOperator,
			Managers: []model.ManagerRef{{Manager: "team-operator", Operation: "Update"}}},
		// A manual edit: adopt it instead.
		{Path: "/spec/paused", FieldPath: ".spec.paused", Change: model.Changed, Cause: model.CauseManual},
		// Left alone by every engine: nothing to declare.
		{Path: "/metadata/annotations/x", FieldPath: ".metadata.annotations.x", Change: model.Added, Cause: model.CauseController,
			Verdicts: []model.Verdict{{Engine: "a", Kind: model.LeftAlone}}},
	}
	return r
}

func TestBuild(t *testing.T) {
	ss := Build(report(), engines())
	if len(ss) != 2 || ss[0].Pointer != "/metadata/labels/team" || ss[1].Pointer != "/spec/replicas" {
		t.Fatalf("want the operator's label and the HPA's replicas, sorted: %+v", ss)
	}
	label, replicas := ss[0], ss[1]
	if label.Manager != "team-operator" || label.InGit || label.Reason != "team-operator (operator) owns .metadata.labels.team of Deployment web" {
		t.Errorf("label: %+v", label)
	}
	if got := label.Engines(); len(got) != 2 || label.Rules["b"] != (ruleB{Label: "team"}) {
		t.Errorf("label: both engines have a rule, got %v", label.Rules)
	}
	if got := replicas.Engines(); len(got) != 1 || got[0] != "a" {
		t.Errorf("replicas: engine b has no rule for it, got %v", replicas.Rules)
	}
	// Engines' advice in the registry's order, then the neutral advice.
	if len(replicas.Advice) != 2 || replicas.Advice[0] != "a says /spec/replicas" || !strings.Contains(replicas.Advice[1], "remove spec.replicas from Git") {
		t.Errorf("replicas advice: %q", replicas.Advice)
	}
}

// Each engine's rule is printed under its name, between the field's facts
// and the advice, as -o json and -o yaml have always shown them.
func TestSuggestionJSON(t *testing.T) {
	s := Build(report(), engines())[0]
	s.Checks = []Checked{{Owner: "AApp shop/web", Engine: "a", Verdict: model.Ignored, OK: true}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"path":"/metadata/labels/team","fieldPath":".metadata.labels.team","manager":"team-operator","cause":"operator",` +
		`"reason":"team-operator (operator) owns .metadata.labels.team of Deployment web","inGit":false,` +
		`"a":{"path":"/metadata/labels/team"},"b":{"label":"team"},"advice":["a says /metadata/labels/team"],` +
		`"checks":[{"owner":"AApp shop/web","engine":"a","verdict":"ignored","reason":"","ok":true}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	none := Suggestion{Facts: Facts{Pointer: "/x"}}
	b, _ = json.Marshal(none)
	if string(b) != `{"path":"/x","fieldPath":"","manager":"","cause":"","reason":"","inGit":false}` {
		t.Errorf("no rule, no advice: %s", b)
	}
	var back Suggestion
	if err := json.Unmarshal(b, &back); err != nil || back.Pointer != "/x" {
		t.Errorf("decode: %v %+v", err, back)
	}
}

// A rule is appended to the holder's list, its setting added once (also
// when spelled otherwise), and the snippet shows both, the reason above
// the rule.
func TestWithRuleAndSnippet(t *testing.T) {
	e := engines()[0]
	s := Build(report(), engines())[1]
	holder := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "a.example.com/v1", "kind": "AApp",
		"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"rules": []any{map[string]any{"path": "/x"}}, "options": []any{"KEEP=true"}}}}
	withRule, err := s.WithRule(e, holder)
	if err != nil {
		t.Fatal(err)
	}
	rules, _, _ := unstructured.NestedSlice(withRule.Object, "spec", "rules")
	opts, _, _ := unstructured.NestedStringSlice(withRule.Object, "spec", "options")
	if len(rules) != 2 || rules[1].(map[string]any)["path"] != "/spec/replicas" || len(opts) != 1 {
		t.Errorf("rules %v, options %v", rules, opts)
	}
	if _, ok := holder.Object["spec"].(map[string]any)["rules"].([]any); !ok || len(holder.Object["spec"].(map[string]any)["rules"].([]any)) != 1 {
		t.Errorf("the holder itself changed: %v", holder.Object)
	}
	want := `spec:
  options:
    - Keep=true
  rules:
    # kube-controller-manager (autoscaler) owns .spec.replicas of Deployment web
    - path: /spec/replicas
`
	if got := s.Snippet(e, "AApp"); got != want {
		t.Errorf("snippet:\n%s\nwant:\n%s", got, want)
	}
	if got := s.Snippet(engines()[1], "BApp"); got != "" {
		t.Errorf("no rule of b: want no snippet, got %q", got)
	}
	if _, err := s.WithRule(engines()[1], holder); err == nil {
		t.Error("an AApp holds no B rule: want an error")
	}
}

func TestFieldFacts(t *testing.T) {
	for path, want := range map[string]bool{
		".spec.template.spec.containers[name=app].image": true,
		".spec.replicas":                  false,
		".spec.ports[containerPort=80].x": true,
	} {
		if got := (suggestapi.Field{Drift: model.FieldDrift{FieldPath: path}}).KeyedItem(); got != want {
			t.Errorf("KeyedItem(%s) = %v, want %v", path, got, want)
		}
	}
	for m, want := range map[string]bool{
		"vpa-updater": true, "kube-controller-manager": true, "manager": false, "Go-http-client": false,
		"kubectl-edit": false, "cert-manager-7d9f8b6c5d-x2k4j": false, "": false,
	} {
		if got := stableManager(m); got != want {
			t.Errorf("stableManager(%q) = %v, want %v", m, got, want)
		}
	}
}
