package argocd

import (
	"fmt"
	"strings"
	"sync"

	"github.com/itchyny/gojq"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"

	"github.com/kubectl-drift/kubectl-drift/internal/jq"
)

// ignoreRule is one ignoreDifferences (or ignoreResourceUpdates) source:
// an Application entry or an argocd-cm key.
type ignoreRule struct {
	Origin model.Origin
	// FromCM: an argocd-cm override. OverrideKey is then its key in Argo's
	// resourceOverrides map ("apps/Deployment", "Service", "*/*").
	FromCM      bool
	OverrideKey string
	// Group and Kind are globs; Name and Namespace exact (empty = any).
	Group, Kind, Name, Namespace string
	JSONPointers                 []string
	JQPathExpressions            []string
	Managers                     []string
	Scope                        model.Scope
	// Type defaults to argocd.ignoreDifferences.
	Type model.RuleType
	// Errors are problems found while compiling the rule.
	Errors []string
	// jq holds the compiled del(EXPR) programs, nil where an expression
	// does not compile.
	jq []*gojq.Code
	// fatal is set when Argo CD would fail to build its normalizer because
	// of this rule (a jq expression that does not parse or compile).
	fatal error
	// slow marks jq expressions that hit the time limit once: later
	// objects skip them at once instead of waiting again (scan).
	slow sync.Map
	once sync.Once
}

func (r *ignoreRule) timedOut(i int) bool {
	_, ok := r.slow.Load(i)
	return ok
}

func (r *ignoreRule) markTimedOut(i int) { r.slow.Store(i, true) }

// compile checks the rule the way NewIgnoreNormalizer would and records
// problems. Bad pointers and globs only make Argo skip the rule silently;
// bad jq makes Argo's whole comparison fail.
func (r *ignoreRule) compile() { r.once.Do(r.doCompile) }

func (r *ignoreRule) doCompile() {
	if !r.affectsDiff() {
		return
	}
	for _, g := range []struct{ what, p string }{{"group", r.Group}, {"kind", r.Kind}} {
		if _, err := compileGlob(g.p); err != nil {
			r.Errors = append(r.Errors, fmt.Sprintf("invalid %s glob %q: %v (Argo CD never matches it)", g.what, g.p, err))
		}
	}
	for _, p := range r.JSONPointers {
		if err := validatePointer(p); err != nil {
			r.Errors = append(r.Errors, err.Error())
		}
	}
	r.jq = make([]*gojq.Code, len(r.JQPathExpressions))
	for i, e := range r.JQPathExpressions {
		code, err := jq.CompileDelete(e)
		if err != nil {
			r.Errors = append(r.Errors, fmt.Sprintf("invalid jq path expression %q: %v", e, err))
			if r.fatal == nil {
				r.fatal = fmt.Errorf("jq path expression %q of %s does not compile: %w", e, r.Origin.String(), err)
			}
			continue
		}
		r.jq[i] = code
	}
}

// affectsDiff: the rule feeds the diff normalizer (not refresh-only).
func (r *ignoreRule) affectsDiff() bool {
	return r.Scope == model.ScopeDiff || r.Scope == model.ScopeDiffAndApply
}

// validatePointer checks RFC 6901 syntax. Argo does not validate: a pointer
// without a leading slash is applied by json-patch as if only its last token
// counted, so the rule silently removes the wrong thing or nothing.
func validatePointer(p string) error {
	if p == "" {
		return fmt.Errorf(`invalid JSON pointer "": empty pointer (would remove the whole document)`)
	}
	_, err := jsonpointer.Parse(p)
	return err
}

// matchesObject mirrors the normalizer's match (diff_normalizer.go Normalize
// and ignore.go HasIgnoreDifference for Application entries): group and kind
// globs, name and namespace exact or empty.
func (r *ignoreRule) matchesObject(group, kind, name, namespace string) bool {
	return globMatch(r.Group, group) && globMatch(r.Kind, kind) &&
		(r.Name == "" || r.Name == name) && (r.Namespace == "" || r.Namespace == namespace)
}

// managersApply mirrors util/argo/diff/ignore.go HasIgnoreDifference: argocd-cm
// overrides are looked up by the exact key "group/kind" (so "/Service" for
// the core group, which a kind-only key "Service" never equals) and "*/*";
// Application entries by glob.
func (r *ignoreRule) managersApply(group, kind, name, namespace string) bool {
	if r.FromCM {
		return r.OverrideKey == group+"/"+kind || r.OverrideKey == wildcardOverrideKey
	}
	return r.matchesObject(group, kind, name, namespace)
}

// toModel renders the rule in the common model.
func (r *ignoreRule) toModel() model.Rule {
	t := r.Type
	if t == "" {
		t = RuleIgnoreDifferences
	}
	mr := model.Rule{
		Engine: Engine, Type: t, Origin: r.Origin,
		Target:            model.Selector{Group: r.Group, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace, Syntax: model.MatchGlob},
		JSONPointers:      r.JSONPointers,
		JQPathExpressions: r.JQPathExpressions,
		Managers:          r.Managers,
		Scope:             r.Scope,
	}
	if r.FromCM && r.OverrideKey == wildcardOverrideKey {
		mr.Target.Group, mr.Target.Kind = "*", "*"
	}
	if len(r.Errors) > 0 {
		mr.Error = strings.Join(r.Errors, "; ")
	}
	return mr
}

// appRules turns spec.ignoreDifferences into rules.
func appRules(app *Application, src cmSource) []*ignoreRule {
	var out []*ignoreRule
	for i, d := range app.Spec.IgnoreDifferences {
		field := fmt.Sprintf("%s.spec.ignoreDifferences[%d]", strings.ReplaceAll(src.Prefix, "/", "."), i)
		r := &ignoreRule{
			Origin: src.origin(field, fmt.Sprintf("%s/spec/ignoreDifferences/%d", src.Prefix, i)),
			Group:  d.Group, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace,
			JSONPointers: d.JSONPointers, JQPathExpressions: d.JQPathExpressions, Managers: d.ManagedFieldsManagers,
			Scope: model.ScopeDiff,
		}
		if app.HasSyncOption("RespectIgnoreDifferences=true") {
			r.Scope = model.ScopeDiffAndApply
		}
		out = append(out, r)
	}
	return out
}
