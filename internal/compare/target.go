package compare

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// field names of a target, in the order they are reported.
var targetFields = []string{"group", "version", "kind", "namespace", "name"}

// target is a rule's object selector with every string matcher written as
// a full-match regex over the same alphabet, whatever the engine's syntax.
type target struct {
	// re holds one regex per field; anyRegex where the field matches all.
	re map[string]string
	// desc is each field as the rule writes it, for messages; any marks
	// fields that match everything.
	desc map[string]string
	any  map[string]bool
	// label and annotation selectors, compared as strings.
	labels, annotations string
}

// targetOf converts a rule's selector, whose syntax is def when it does not
// say:
//   - Argo CD (MatchGlob): group and kind are gobwas globs where "" matches
//     only "" (the core group); name and namespace are exact, "" meaning any
//     (util/argo/normalizers/diff_normalizer.go Normalize); no version.
//   - Flux (MatchRegex): every field is a regex anchored as ^(?:...)$ and
//     an empty field matches everything, the group included
//     (fluxcd/pkg ssa/jsondiff/selector.go MatchGVK: `if len(s.selector.Group) > 0`).
//     So Flux `kind: Service` also matches Knative's serving.knative.dev
//     Service; only `group: "^$"` means the core group.
//   - MatchExact: plain equality, "" meaning any.
func targetOf(s model.Selector, def model.MatchSyntax) (target, error) {
	t := target{re: map[string]string{}, desc: map[string]string{}, any: map[string]bool{}, labels: s.LabelSelector, annotations: s.AnnotationSelector}
	var approx error
	syn := s.Syntax
	if syn == "" {
		syn = def
	}
	vals := map[string]string{"group": s.Group, "version": s.Version, "kind": s.Kind, "namespace": s.Namespace, "name": s.Name}
	for _, f := range targetFields {
		v := vals[f]
		t.desc[f] = fmt.Sprintf("%q", v)
		if v == "" && f == "group" && syn == model.MatchGlob {
			t.desc[f] = `"" (the core group)`
		}
		switch {
		case syn == model.MatchGlob && (f == "group" || f == "kind"):
			re, err := globRegex(v)
			if errors.Is(err, errUndecidable) {
				approx = err
			} else if err != nil {
				return t, fmt.Errorf("%s: %w", f, err)
			}
			t.re[f] = re
		case v == "":
			t.re[f] = anyRegex
		case syn == model.MatchRegex:
			if _, err := regexp.Compile(v); err != nil {
				return t, fmt.Errorf("invalid %s regex %q: %w", f, v, err)
			}
			t.re[f] = v
		default: // exact names, and a glob selector's version
			t.re[f] = regexp.QuoteMeta(v)
		}
		t.any[f] = t.re[f] == anyRegex || t.re[f] == ".*" || t.re[f] == "(?s:.*)"
	}
	return t, approx
}

// fieldRel is how one field of two targets relates, with example values.
type fieldRel struct {
	Field      string
	ADesc      string
	BDesc      string
	AAny, BAny bool
	langRel
}

// targetRel is how two targets relate as sets of objects.
type targetRel struct {
	Rel    Relation
	Fields []fieldRel
	// Extra lists label/annotation selectors that differ.
	Extra []selectorDiff
}

// relateTargets relates a (this rule) to b (the other engine's rule).
// Object sets are products of per-field languages, so A ⊆ B exactly when
// every field is ⊆ (and no field is empty), and they are disjoint when any
// field is. Label and annotation selectors are compared as strings: equal
// selectors select the same objects; a selector on one side only makes
// that side narrower.
func (rc *relCache) relateTargets(a, b target) (targetRel, error) {
	var tr targetRel
	sub, sup, disjoint, unknown := true, true, false, false
	for _, f := range targetFields {
		lr, err := rc.relate(a.re[f], b.re[f])
		if err != nil {
			return targetRel{Rel: RelUnknown}, err
		}
		tr.Fields = append(tr.Fields, fieldRel{Field: f, ADesc: a.desc[f], BDesc: b.desc[f], AAny: a.any[f], BAny: b.any[f], langRel: lr})
		switch lr.Rel {
		case RelEqual:
		case RelSubset:
			sup = false
		case RelSuperset:
			sub = false
		case RelOverlap:
			sub, sup = false, false
		case RelDisjoint:
			disjoint = true
		default:
			unknown = true
		}
	}
	for _, sel := range []selectorDiff{{"labelSelector", a.labels, b.labels}, {"annotationSelector", a.annotations, b.annotations}} {
		switch {
		case sel.A == sel.B:
			continue
		case sel.B == "":
			sup = false
		case sel.A == "":
			sub = false
		default:
			sub, sup = false, false
		}
		tr.Extra = append(tr.Extra, sel)
	}
	switch {
	case disjoint:
		tr.Rel = RelDisjoint
	case unknown:
		tr.Rel = RelUnknown
	case sub && sup:
		tr.Rel = RelEqual
	case sub:
		tr.Rel = RelSubset
	case sup:
		tr.Rel = RelSuperset
	default:
		tr.Rel = RelOverlap
	}
	return tr, nil
}

// describe explains a target relation in words, from the side of the rule
// being reported ("this") against the other engine's rule ("other").
func (tr targetRel) describe(this, other string) []string {
	var out []string
	for _, f := range tr.Fields {
		if f.Rel == RelEqual {
			continue
		}
		switch {
		case f.AAny && !f.BAny:
			out = append(out, fmt.Sprintf("%s matches any %s, %s only %s %s", this, f.Field, other, f.Field, f.BDesc))
			continue
		case f.BAny && !f.AAny:
			out = append(out, fmt.Sprintf("%s matches any %s, %s only %s %s", other, f.Field, this, f.Field, f.ADesc))
			continue
		}
		if f.HasOnlyA {
			out = append(out, fmt.Sprintf("%s matches %s %s, %s does not", this, f.Field, quoteVal(f.Field, f.OnlyA), other))
		}
		if f.HasOnlyB {
			out = append(out, fmt.Sprintf("%s matches %s %s, %s does not", other, f.Field, quoteVal(f.Field, f.OnlyB), this))
		}
	}
	for _, e := range tr.Extra {
		switch {
		case e.B == "":
			out = append(out, fmt.Sprintf("%s only selects objects with %s %q, %s has no such selector", this, e.What, e.A, other))
		case e.A == "":
			out = append(out, fmt.Sprintf("%s only selects objects with %s %q, %s has no such selector", other, e.What, e.B, this))
		default:
			out = append(out, fmt.Sprintf("%s selects %s %q, %s %q", this, e.What, e.A, other, e.B))
		}
	}
	return out
}

// selectorDiff is a label or annotation selector that differs.
type selectorDiff struct{ What, A, B string }

func quoteVal(field, s string) string {
	if s == "" && field == "group" {
		return `"" (core group)`
	}
	return fmt.Sprintf("%q", s)
}

// relCache memoizes language relations for one comparison: rules share
// most of their selector strings ("apps", "Deployment", ".*"), so n rules
// need far fewer than n² automaton walks.
type relCache struct {
	m     map[[2]string]cachedRel
	langs map[string]*lang
	errs  map[string]error
}

type cachedRel struct {
	r   langRel
	err error
}

func newRelCache() *relCache {
	return &relCache{m: map[[2]string]cachedRel{}, langs: map[string]*lang{}, errs: map[string]error{}}
}

func (rc *relCache) lang(re string) (*lang, error) {
	if l, ok := rc.langs[re]; ok {
		return l, nil
	}
	if err, ok := rc.errs[re]; ok {
		return nil, err
	}
	l, err := newLang(re)
	if err != nil {
		rc.errs[re] = err
		return nil, err
	}
	rc.langs[re] = l
	return l, nil
}

func (rc *relCache) relate(a, b string) (langRel, error) {
	if a == b {
		return langRel{Rel: RelEqual}, nil
	}
	k := [2]string{a, b}
	if c, ok := rc.m[k]; ok {
		return c.r, c.err
	}
	la, err := rc.lang(a)
	if err != nil {
		return langRel{Rel: RelUnknown}, err
	}
	lb, err := rc.lang(b)
	if err != nil {
		return langRel{Rel: RelUnknown}, err
	}
	r, err := relateLangs(la, lb)
	rc.m[k] = cachedRel{r, err}
	return r, err
}
