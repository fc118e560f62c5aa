package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
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
	// kind and global are what the rule's engine says of it (auditapi).
	kind   auditapi.Kind
	global bool
}

// isIgnoreRule reports whether a rule hides fields or objects from drift
// detection: the rules that budgets and justifications count.
func (r *ruleInfo) isIgnoreRule() bool { return r.isFieldRule() || r.kind == auditapi.Exclusion }

// isFieldRule reports whether a rule removes fields from the diff (the rules
// that can shadow each other or match nothing). Refresh-only rules
// (ignoreResourceUpdates) hide nothing from drift.
func (r *ruleInfo) isFieldRule() bool {
	return r.Scope != model.ScopeRefresh && (r.kind == auditapi.Field || r.kind == auditapi.RenderedField)
}

func prepareRule(r model.Rule, eng engines) *ruleInfo {
	ri := &ruleInfo{Rule: r, m: compileSelector(r.Target), whole: r.WholeResource,
		kind: eng.kind(r), global: eng.global(r)}
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
	ri.key = ruleKey(r, ri.global)
	return ri
}

// ruleKey identifies a rule by what it does and where it lives, not by its
// line: moving a rule is not a change, widening it is.
func ruleKey(r model.Rule, global bool) string {
	s := func(v []string) string {
		c := append([]string(nil), v...)
		sort.Strings(c)
		return strings.Join(c, ",")
	}
	t := r.Target
	holder := r.Origin.Object
	if global {
		// Each file of global rules (an argocd-cm) is its own instance:
		// the same key in two of them is two rules.
		holder += "@" + r.Origin.File
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|p=%s|jq=%s|m=%s|w=%v|v=%s",
		r.Engine, r.Type, holder, t.Syntax, t.Group, t.Version, t.Kind, t.Name, t.Namespace,
		t.LabelSelector, t.AnnotationSelector, s(r.JSONPointers), s(r.JQPathExpressions), s(r.Managers), r.WholeResource, r.Value)
}
