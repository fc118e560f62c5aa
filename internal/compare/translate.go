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

// Translation is one rule said in another engine.
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

// Translator says other engines' rules in one engine (compare --to); the
// engine provides it in its Semantics.
type Translator struct {
	// Forms are the YAML shapes Render writes, the default first.
	Forms []string
	// Translate says one valid rule of another engine in this engine.
	Translate func(src Source) Translation
	// Render writes translations as ready-to-merge YAML documents in one
	// of Forms, with a `# lossy:` comment on every inexact translation and
	// an `# untranslatable:` comment for every part left out.
	Render func(trs []Translation, form string) ([]byte, error)
}

// Source is a rule to translate, as compare analysed it.
type Source struct {
	Rule model.Rule
	// Approximate says why the rule's target could only be modelled
	// approximately, "" when exactly.
	Approximate string
	// Syntax is the syntax of the rule's selector (its engine's default
	// when the selector does not say).
	Syntax model.MatchSyntax
	// Expand, when objects were given, expands a jq expression to the
	// pointers it selects on the given objects the rule applies to, and
	// says on how many objects; nil otherwise.
	Expand func(expr string) (ptrs []string, objects int)
}

// Translate says every rule of the engines that are not `to` in engine
// `to`. objs, when given, let jq programs that are not plain paths be
// expanded to the concrete pointers they select on those objects (a lossy
// translation: items added later are not covered).
func Translate(rules []model.Rule, to model.Engine, objs []*unstructured.Unstructured, es Engines) ([]Translation, error) {
	t := es.of(to).Translator
	if t == nil {
		return nil, fmt.Errorf("rules cannot be translated to %s", es.title(to))
	}
	var ev *evaluator
	if len(objs) > 0 {
		ev = newEvaluator(objs, es)
	}
	var out []Translation
	for _, r := range rules {
		if r.Engine == to {
			continue
		}
		a := analyze(r, es)
		tr, ok := translatable(a)
		if !ok {
			out = append(out, tr)
			continue
		}
		src := Source{Rule: r, Approximate: a.approximate, Syntax: r.Target.Syntax}
		if src.Syntax == "" {
			src.Syntax = es.of(r.Engine).syntax()
		}
		if ev != nil {
			src.Expand = func(expr string) ([]string, int) { return ev.jqPointers(a, expr) }
		}
		out = append(out, t.Translate(src))
	}
	return out, nil
}

// Render writes translations to engine `to` in one of its forms (its
// Translator.Render).
func Render(trs []Translation, to model.Engine, form string, es Engines) ([]byte, error) {
	t := es.of(to).Translator
	if t == nil {
		return nil, fmt.Errorf("rules cannot be translated to %s", es.title(to))
	}
	return t.Render(trs, form)
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

// RegexTarget writes a selector (of syntax syn when it does not say) as
// anchored regexes where an empty field
// matches everything: globs become regexes (gobwas semantics, no
// separators), exact names become quoted regexes, a glob's core group ""
// becomes `^$` (an empty regex group matches every group), and `*`
// becomes an empty field.
func RegexTarget(s model.Selector, syn model.MatchSyntax) (model.Selector, error) {
	if s.Syntax != "" {
		syn = s.Syntax
	}
	if syn == model.MatchRegex {
		return s, nil
	}
	out := model.Selector{Syntax: model.MatchRegex, LabelSelector: s.LabelSelector, AnnotationSelector: s.AnnotationSelector}
	for _, f := range []struct {
		in  string
		out *string
	}{{s.Group, &out.Group}, {s.Kind, &out.Kind}} {
		if syn != model.MatchGlob {
			if f.in != "" {
				*f.out = regexp.QuoteMeta(f.in)
			}
			continue
		}
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

// GlobTargets is a selector said as glob selectors (GlobTarget).
type GlobTargets struct {
	Selectors      []model.Selector
	Lossy          []string
	Untranslatable []string
}

// GlobTarget writes a regex (or exact) selector, of syntax syn when it does
// not say, as one or more glob
// selectors: group and kind gobwas globs, exact name and namespace. Group
// and kind regexes become globs when a glob accepts exactly the same
// strings; name and namespace regexes become exact names when they accept
// at most maxNames strings (one selector per name). Regexes whose only
// regex feature is an unescaped dot (`networking.k8s.io`) are taken
// literally, as their authors meant, and flagged lossy. who names the
// glob-matching engine and rule in messages ("Argo CD",
// "Argo CD ignoreDifferences"). Label and annotation selectors are left to
// the caller.
func GlobTarget(s model.Selector, syn model.MatchSyntax, maxNames int, who, whoRule string) GlobTargets {
	var out GlobTargets
	if s.Syntax != "" {
		syn = s.Syntax
	}
	if syn == model.MatchExact {
		for _, f := range []*string{&s.Group, &s.Kind, &s.Name, &s.Namespace, &s.Version} {
			if *f != "" {
				*f = regexp.QuoteMeta(*f)
			}
		}
	}
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
		out.Untranslatable = append(out.Untranslatable, fmt.Sprintf("%s regex %q has no equivalent %s glob", field, re, who))
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
		out.Untranslatable = append(out.Untranslatable, fmt.Sprintf("%s regex %q: %s matches %ss exactly and this regex matches more than %d of them", field, re, who, field, maxNames))
		return nil
	}
	g := glob("group", s.Group)
	k := glob("kind", s.Kind)
	names := exact("name", s.Name)
	nss := exact("namespace", s.Namespace)
	if s.Version != "" {
		out.Lossy = append(out.Lossy, fmt.Sprintf("version regex %q: %s cannot select a version; the rule covers every version", s.Version, whoRule))
	}
	if len(out.Untranslatable) == 0 {
		for _, ns := range nss {
			for _, n := range names {
				out.Selectors = append(out.Selectors, model.Selector{Group: g, Kind: k, Name: n, Namespace: ns, Syntax: model.MatchGlob})
			}
		}
	}
	return out
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
