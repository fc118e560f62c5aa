package compare

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Translation is one rule said in the other engine.
type Translation struct {
	From model.Rule `json:"from"`
	// To holds the translated rules; empty when nothing could be said.
	To []model.Rule `json:"to,omitempty"`
	// Lossy names what the translation does not say exactly.
	Lossy []string `json:"lossy,omitempty"`
	// Untranslatable names the parts left out, and why.
	Untranslatable []string `json:"untranslatable,omitempty"`
	// Notes are behaviour differences that are not a loss of the rule.
	Notes []string `json:"notes,omitempty"`
}

// maxNames bounds how many exact Argo CD rules a Flux name regex may expand to.
const maxNames = 16

// Translate says every rule of the engine that is not `to` in engine `to`.
// objs, when given, let jq programs that are not plain paths be expanded to
// the concrete pointers they select on those objects (a lossy translation:
// items added later are not covered).
func Translate(rules []model.Rule, to model.Engine, objs []*unstructured.Unstructured) []Translation {
	var ev *evaluator
	if len(objs) > 0 {
		ev = newEvaluator(objs)
	}
	var out []Translation
	for _, r := range rules {
		if r.Engine == to {
			continue
		}
		a := analyze(r)
		var tr Translation
		if to == model.EngineFlux {
			tr = toFlux(a, ev)
		} else {
			tr = toArgo(a)
		}
		out = append(out, tr)
	}
	return out
}

// translatable starts the translation of a's rule; ok is false when the rule
// is invalid or cannot be expressed in any engine but its own, and then tr
// says why.
func translatable(a *analyzed) (tr Translation, ok bool) {
	tr = Translation{From: a.rule}
	if len(a.invalid) > 0 {
		tr.Untranslatable = append(tr.Untranslatable, "invalid rule: "+strings.Join(a.invalid, "; "))
		return tr, false
	}
	if a.intrinsic != "" {
		tr.Untranslatable = append(tr.Untranslatable, a.intrinsic)
		return tr, false
	}
	return tr, true
}

func toFlux(a *analyzed, ev *evaluator) Translation {
	tr, ok := translatable(a)
	if !ok {
		return tr
	}
	var paths []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, p := range a.rule.JSONPointers {
		add(p)
	}
	for i, e := range a.rule.JQPathExpressions {
		j := a.jq[i]
		if j.Kind == jqPath {
			p, _ := j.Pattern.Pointer()
			add(p)
			continue
		}
		if ev != nil {
			ptrs, n := ev.jqPointers(a, e)
			if len(ptrs) > 0 {
				for _, p := range ptrs {
					add(p)
				}
				tr.Lossy = append(tr.Lossy, fmt.Sprintf("jq %s expanded to the %d pointer(s) it selects on the %d given object(s) it applies to; %s", e, len(ptrs), n, j.Reason))
				continue
			}
		}
		tr.Untranslatable = append(tr.Untranslatable, fmt.Sprintf("jq %s %s", e, j.Reason))
	}
	if len(a.rule.Managers) > 0 {
		tr.Untranslatable = append(tr.Untranslatable, fmt.Sprintf("managedFieldsManagers %s: %s", strings.Join(a.rule.Managers, ", "), ReasonManagers))
	}
	if len(paths) == 0 {
		return tr
	}
	sel, err := argoTargetToFlux(a.rule.Target)
	if err != nil {
		tr.Untranslatable = append(tr.Untranslatable, err.Error())
		return tr
	}
	if a.approximate != "" {
		tr.Lossy = append(tr.Lossy, a.approximate)
	}
	tr.To = []model.Rule{{
		Engine: model.EngineFlux, Type: model.RuleFluxKustomizeIgnore,
		Target: sel, JSONPointers: paths, Scope: model.ScopeDiffAndApply,
	}}
	if a.rule.Scope == model.ScopeDiff {
		tr.Notes = append(tr.Notes, "Flux also leaves ignored fields out of apply; Argo CD still syncs them unless syncOptions has RespectIgnoreDifferences=true")
	}
	return tr
}

// argoTargetToFlux writes an Argo CD target as a Flux one: globs become
// regexes (gobwas semantics, no separators), exact names become quoted
// regexes, Argo's core group "" becomes `^$` because an empty Flux group
// matches every group (ssa/jsondiff/selector.go MatchGVK), and `*` becomes
// an empty field.
func argoTargetToFlux(s model.Selector) (model.Selector, error) {
	out := model.Selector{Syntax: model.MatchRegex}
	for _, f := range []struct {
		in  string
		out *string
	}{{s.Group, &out.Group}, {s.Kind, &out.Kind}} {
		if f.in == "" {
			*f.out = "^$"
			continue
		}
		re, err := globRegex(f.in)
		if err != nil && !errors.Is(err, errUndecidable) {
			return out, err
		}
		if rel, err := relate(re, anyRegex); err == nil && rel.Rel == RelEqual {
			continue
		}
		*f.out = re
	}
	if s.Name != "" {
		out.Name = regexp.QuoteMeta(s.Name)
	}
	if s.Namespace != "" {
		out.Namespace = regexp.QuoteMeta(s.Namespace)
	}
	return out, nil
}

// argoTargets is a Flux target said as Argo CD targets.
type argoTargets struct {
	Selectors      []model.Selector
	Lossy          []string
	Untranslatable []string
}

// fluxTargetToArgo writes a Flux target as one or more Argo CD targets.
// Group and kind regexes become globs when a glob accepts exactly the same
// strings; name and namespace regexes become exact names when they accept
// a few strings only (one Argo rule per name). Flux regexes whose only
// regex feature is an unescaped dot (`networking.k8s.io`) are taken
// literally, as their authors meant, and flagged lossy.
func fluxTargetToArgo(s model.Selector) (argoTargets, []string) {
	var out argoTargets
	dotted := func(field, re string) (string, bool) {
		lit, dots, ok := dotLiteral(re)
		if !ok || !dots {
			return "", false
		}
		out.Lossy = append(out.Lossy, fmt.Sprintf("%s regex %q: its unescaped dots match any character; translated as the literal %q", field, re, lit))
		return lit, true
	}
	glob := func(field, re string) string {
		if re == "" {
			return "*"
		}
		if lit, ok := dotted(field, re); ok {
			return globEscape(lit)
		}
		if g, ok := regexGlob(re); ok {
			return g
		}
		out.Untranslatable = append(out.Untranslatable, fmt.Sprintf("%s regex %q has no equivalent Argo CD glob", field, re))
		return ""
	}
	exact := func(field, re string) []string {
		if re == "" {
			return []string{""}
		}
		if lit, ok := dotted(field, re); ok {
			return []string{lit}
		}
		if words, ok, err := finiteStrings(re, maxNames); err == nil && ok && len(words) > 0 {
			return words
		}
		out.Untranslatable = append(out.Untranslatable, fmt.Sprintf("%s regex %q: Argo CD matches %ss exactly and this regex matches more than %d of them", field, re, field, maxNames))
		return nil
	}
	g := glob("group", s.Group)
	k := glob("kind", s.Kind)
	names := exact("name", s.Name)
	nss := exact("namespace", s.Namespace)
	if s.Version != "" {
		out.Lossy = append(out.Lossy, fmt.Sprintf("version regex %q: Argo CD ignoreDifferences cannot select a version; the rule covers every version", s.Version))
	}
	if len(out.Untranslatable) == 0 {
		for _, ns := range nss {
			for _, n := range names {
				out.Selectors = append(out.Selectors, model.Selector{Group: g, Kind: k, Name: n, Namespace: ns, Syntax: model.MatchGlob})
			}
		}
	}
	return out, out.Untranslatable
}

// dotLiteral reads re as a literal with its unescaped dots taken as dots,
// when literal characters and dots are all it has; dots says whether it
// had any.
func dotLiteral(re string) (lit string, dots, ok bool) {
	p, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return "", false, false
	}
	var b strings.Builder
	var walk func(p *syntax.Regexp) bool
	walk = func(p *syntax.Regexp) bool {
		switch p.Op {
		case syntax.OpLiteral:
			if p.Flags&syntax.FoldCase != 0 {
				return false
			}
			b.WriteString(string(p.Rune))
		case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
			b.WriteByte('.')
			dots = true
		case syntax.OpConcat:
			for _, s := range p.Sub {
				if !walk(s) {
					return false
				}
			}
		case syntax.OpCapture:
			return walk(p.Sub[0])
		default:
			return false
		}
		return true
	}
	if !walk(p) || b.Len() == 0 {
		return "", false, false
	}
	return b.String(), dots, true
}

func toArgo(a *analyzed) Translation {
	tr, ok := translatable(a)
	if !ok {
		return tr
	}
	var ptrs []string
	for _, p := range a.rule.JSONPointers {
		if p == "" {
			tr.Untranslatable = append(tr.Untranslatable, `path "" ignores the whole object (fluxcd/pkg ssa/jsondiff IgnorePathRoot); Argo CD ignoreDifferences has no whole-object form`)
			continue
		}
		ptrs = append(ptrs, p)
	}
	at, _ := fluxTargetToArgo(a.rule.Target)
	tr.Lossy = append(tr.Lossy, at.Lossy...)
	tr.Untranslatable = append(tr.Untranslatable, at.Untranslatable...)
	if a.rule.Target.LabelSelector != "" {
		tr.Untranslatable = append(tr.Untranslatable, fmt.Sprintf("target.labelSelector %q: %s", a.rule.Target.LabelSelector, ReasonLabels))
	}
	if a.rule.Target.AnnotationSelector != "" {
		tr.Untranslatable = append(tr.Untranslatable, fmt.Sprintf("target.annotationSelector %q: %s", a.rule.Target.AnnotationSelector, ReasonLabels))
	}
	if len(ptrs) == 0 || len(tr.Untranslatable) > 0 && (len(at.Selectors) == 0 || a.rule.Target.LabelSelector != "" || a.rule.Target.AnnotationSelector != "") {
		// A rule for other objects than the ones meant is worse than none.
		return tr
	}
	for _, sel := range at.Selectors {
		tr.To = append(tr.To, model.Rule{
			Engine: model.EngineArgoCD, Type: model.RuleArgoIgnoreDifferences,
			Target: sel, JSONPointers: ptrs, Scope: model.ScopeDiff,
		})
	}
	tr.Notes = append(tr.Notes, "Argo CD still syncs ignored fields unless the Application sets syncOptions RespectIgnoreDifferences=true; Flux leaves them out of apply")
	return tr
}
