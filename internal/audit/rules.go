package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ruleInfo is a rule prepared once for all checks: compiled selector,
// decoded paths and identity.
type ruleInfo struct {
	model.Rule
	m *matcher
	// paths holds the decoded JSON pointers and the plain jq paths.
	paths [][]string
	// whole: the rule covers the entire object.
	whole bool
	// problem is the first reason the rule cannot be evaluated.
	problem string
	key     string
}

// isIgnoreRule reports whether a rule hides fields or objects from drift
// detection: the rules that budgets and justifications count.
func isIgnoreRule(r model.Rule) bool {
	if r.Scope == model.ScopeRefresh {
		return false // refresh-only (ignoreResourceUpdates) hides nothing from drift
	}
	switch r.Type {
	case model.RuleArgoIgnoreDifferences, model.RuleArgoResourceExclusion,
		model.RuleFluxKustomizeIgnore, model.RuleFluxHelmIgnore:
		return true
	}
	return false
}

// isFieldRule reports whether a rule removes fields from the diff (the rules
// that can shadow each other or match nothing).
func isFieldRule(r model.Rule) bool {
	if r.Scope == model.ScopeRefresh {
		return false
	}
	switch r.Type {
	case model.RuleArgoIgnoreDifferences, model.RuleFluxKustomizeIgnore, model.RuleFluxHelmIgnore:
		return true
	}
	return false
}

func prepareRule(r model.Rule) *ruleInfo {
	ri := &ruleInfo{Rule: r, m: compileSelector(r.Target), whole: r.WholeResource}
	if r.Error != "" {
		ri.problem = r.Error
	}
	for _, p := range r.JSONPointers {
		t, err := parsePointer(p)
		if err != nil {
			if ri.problem == "" {
				ri.problem = err.Error()
			}
			continue
		}
		if len(t) == 0 {
			ri.whole = true
		}
		ri.paths = append(ri.paths, t)
	}
	for _, e := range r.JQPathExpressions {
		if t, ok := jqTokens(e); ok {
			if len(t) == 0 {
				ri.whole = true
			}
			ri.paths = append(ri.paths, t)
		}
	}
	if ri.m.err != nil && ri.problem == "" {
		ri.problem = ri.m.err.Error()
	}
	ri.key = ruleKey(r)
	return ri
}

// ruleKey identifies a rule by what it does and where it lives, not by its
// line: moving a rule is not a change, widening it is.
func ruleKey(r model.Rule) string {
	s := func(v []string) string {
		c := append([]string(nil), v...)
		sort.Strings(c)
		return strings.Join(c, ",")
	}
	t := r.Target
	holder := r.Origin.Object
	if isArgoGlobal(r) {
		// Each argocd-cm file is its own Argo CD instance: the same key
		// in two of them is two rules.
		holder += "@" + r.Origin.File
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|p=%s|jq=%s|m=%s|w=%v|v=%s",
		r.Engine, r.Type, holder, t.Syntax, t.Group, t.Version, t.Kind, t.Name, t.Namespace,
		t.LabelSelector, t.AnnotationSelector, s(r.JSONPointers), s(r.JQPathExpressions), s(r.Managers), r.WholeResource, r.Value)
}

// objectNamespace returns the namespace part of an origin object
// "Kind ns/name".
func objectNamespace(obj string) string {
	_, rest, ok := strings.Cut(obj, " ")
	if !ok {
		return ""
	}
	ns, _, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	return ns
}

func objectKind(obj string) string {
	k, _, _ := strings.Cut(obj, " ")
	return k
}

// isArgoGlobal reports whether an Argo CD rule comes from argocd-cm and so
// applies to every Application.
// Settings read from an argocd-operator ArgoCD resource or from argo-cd
// chart values (field "...configs.cm[key]") are an argocd-cm too.
func isArgoGlobal(r model.Rule) bool {
	if r.Engine != model.Engine("argocd") {
		return false
	}
	k := objectKind(r.Origin.Object)
	return k == "ConfigMap" || k == "ArgoCD" || strings.Contains(r.Origin.Field, "configs.cm[") ||
		r.Type == model.RuleArgoCompareOptions // argocd-cm's /status rule, whatever holds it
}

// argoInstance names the Argo CD instance of an argocd-cm rule: each
// argocd-cm (or ArgoCD resource, or chart values) in a tree is its own
// instance, so its rules never cover another's.
func argoInstance(r model.Rule) string {
	return r.Origin.File + "|" + r.Origin.Object
}
