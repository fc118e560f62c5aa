package audit

import (
	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ruleBuilder builds model.Rule values for tests, one property at a time
// (krew's testutil style), so each case states only what matters to it.
type ruleBuilder struct{ r model.Rule }

// argoApp starts an Application ignoreDifferences rule.
func argoApp(app string) *ruleBuilder {
	return startRule(argocd.Engine, argocd.RuleIgnoreDifferences, model.ScopeDiff, model.MatchGlob,
		model.Origin{File: "argocd/apps.yaml", Line: 10, Column: 7, Object: "Application argocd/" + app, Field: ".spec.ignoreDifferences[0]"})
}

// startRule starts a rule of an engine's type, scope and selector syntax,
// held at o.
func startRule(e model.Engine, t model.RuleType, scope model.Scope, syntax model.MatchSyntax, o model.Origin) *ruleBuilder {
	return &ruleBuilder{model.Rule{Engine: e, Type: t, Scope: scope, Target: model.Selector{Syntax: syntax}, Origin: o}}
}

// argoCM starts an argocd-cm resource.customizations.ignoreDifferences rule.
func argoCM(key string) *ruleBuilder {
	b := argoApp("")
	b.r.Origin.File = "argocd/argocd-cm.yaml"
	b.r.Origin.Object = "ConfigMap argocd/argocd-cm"
	b.r.Origin.Field = "data[resource.customizations.ignoreDifferences." + key + "]"
	return b
}

// fluxKs starts a Kustomization .spec.ignore rule.
func fluxKs(name string) *ruleBuilder {
	return startRule(flux.Engine, flux.RuleKustomizeIgnore, model.ScopeDiffAndApply, model.MatchRegex,
		model.Origin{File: "flux/ks.yaml", Line: 20, Column: 7, Object: "Kustomization flux-system/" + name, Field: ".spec.ignore[0]"})
}

// fluxHR starts a HelmRelease .spec.driftDetection.ignore rule.
func fluxHR(name string) *ruleBuilder {
	b := fluxKs(name)
	b.r.Type = flux.RuleHelmIgnore
	b.r.Origin.File = "flux/hr.yaml"
	b.r.Origin.Object = "HelmRelease flux-system/" + name
	b.r.Origin.Field = ".spec.driftDetection.ignore[0]"
	return b
}

func (b *ruleBuilder) gk(group, kind string) *ruleBuilder {
	b.r.Target.Group, b.r.Target.Kind = group, kind
	return b
}
func (b *ruleBuilder) name(n string) *ruleBuilder { b.r.Target.Name = n; return b }
func (b *ruleBuilder) labels(sel string) *ruleBuilder {
	b.r.Target.LabelSelector = sel
	return b
}
func (b *ruleBuilder) ns(n string) *ruleBuilder { b.r.Target.Namespace = n; return b }
func (b *ruleBuilder) ptr(p ...string) *ruleBuilder {
	b.r.JSONPointers = append(b.r.JSONPointers, p...)
	return b
}
func (b *ruleBuilder) jq(e ...string) *ruleBuilder {
	b.r.JQPathExpressions = append(b.r.JQPathExpressions, e...)
	return b
}
func (b *ruleBuilder) managers(m ...string) *ruleBuilder {
	b.r.Managers = append(b.r.Managers, m...)
	return b
}
func (b *ruleBuilder) whole() *ruleBuilder { b.r.WholeResource = true; return b }
func (b *ruleBuilder) typ(t model.RuleType) *ruleBuilder {
	b.r.Type = t
	return b
}
func (b *ruleBuilder) value(v string) *ruleBuilder      { b.r.Value = v; return b }
func (b *ruleBuilder) err(e string) *ruleBuilder        { b.r.Error = e; return b }
func (b *ruleBuilder) scope(s model.Scope) *ruleBuilder { b.r.Scope = s; return b }
func (b *ruleBuilder) at(file string, line int) *ruleBuilder {
	b.r.Origin.File, b.r.Origin.Line = file, line
	return b
}
func (b *ruleBuilder) field(f string) *ruleBuilder { b.r.Origin.Field = f; return b }
func (b *ruleBuilder) rule() model.Rule            { return b.r }

// manifest builds a Document; fields are set with set().
type docBuilder struct{ d Document }

func manifest(apiVersion, kind, ns, name string) *docBuilder {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	if ns != "" {
		u.SetNamespace(ns)
	}
	return &docBuilder{Document{Object: u, File: "apps/" + name + ".yaml", Line: 1}}
}

// set puts value at the dotted path (maps only; use a []any value for lists).
func (b *docBuilder) set(value any, path ...string) *docBuilder {
	if err := unstructured.SetNestedField(b.d.Object.Object, value, path...); err != nil {
		panic(err)
	}
	return b
}
func (b *docBuilder) at(file string, line int) *docBuilder {
	b.d.File, b.d.Line = file, line
	return b
}
func (b *docBuilder) doc() Document { return b.d }

// deployment is a typical Deployment with one container.
func deployment(ns, name string) *docBuilder {
	return manifest("apps/v1", "Deployment", ns, name).
		set(int64(2), "spec", "replicas").
		set([]any{map[string]any{"name": "app", "image": "nginx:1.27"}}, "spec", "template", "spec", "containers")
}

// runChecks analyzes rules and docs with cfg and returns findings after
// config is applied. Files named by rules are read from root.
func runChecks(t *testing.T, root string, cfg *Config, docs []Document, rules ...model.Rule) []Finding {
	t.Helper()
	if cfg == nil {
		cfg = &Config{}
	}
	s := &snapshot{root: root, engines: newEngines(testEngines()), docs: docs, rules: rules}
	f, _ := applyConfig(analyze(s, cfg, 0), cfg, root)
	return f
}

// only returns the findings of one check.
func only(fs []Finding, id CheckID) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Check == id {
			out = append(out, f)
		}
	}
	return out
}

func noJustification() *Config {
	no := false
	return &Config{Justification: Justification{Required: &no}}
}
