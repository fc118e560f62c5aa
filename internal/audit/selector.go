package audit

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/kubectl-drift/kubectl-drift/internal/globmatch"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// matcher decides whether a manifest is a rule's target, with the engine's
// own matching semantics.
type matcher struct {
	sel model.Selector
	// match is nil when the selector cannot be compiled (the rule is then
	// reported as invalid and matched against nothing).
	match func(u *unstructured.Unstructured) bool
	err   error
	// literalKind is set when the kind selects exactly one kind, so that the
	// index can hand out only manifests of that kind.
	literalKind string
	// literalName is set when the name selects exactly one name.
	literalName string
	// all is set when the group/kind part selects every kind.
	allKinds bool
	// gk matches a group and kind alone (for near-miss and danger checks).
	gk func(group, kind string) bool
	// group matches a group alone.
	group func(string) bool
}

// matchesGK reports whether the selector's group and kind accept gk.
func (m *matcher) matchesGK(group, kind string) bool { return m.gk != nil && m.gk(group, kind) }

// matchesGroup reports whether the selector's group accepts group.
func (m *matcher) matchesGroup(group string) bool { return m.group != nil && m.group(group) }

// coversSelector reports whether every object r selects is also selected
// by m. It is conservative: when unsure it answers false.
func (m *matcher) coversSelector(r model.Selector) bool {
	s := m.sel
	if m.match == nil || s.LabelSelector != "" && s.LabelSelector != r.LabelSelector ||
		s.AnnotationSelector != "" && s.AnnotationSelector != r.AnnotationSelector {
		return false
	}
	switch s.Syntax {
	case model.MatchRegex:
		return regexCovers(s.Group, r.Group) && regexCovers(s.Version, r.Version) && regexCovers(s.Kind, r.Kind) &&
			regexCovers(s.Name, r.Name) && regexCovers(s.Namespace, r.Namespace)
	case model.MatchGlob:
		return globCovers(s.Group, r.Group) && globCovers(s.Kind, r.Kind) && exactCovers(s.Version, r.Version) &&
			exactCovers(s.Name, r.Name) && exactCovers(s.Namespace, r.Namespace)
	}
	return exactCovers(s.Group, r.Group) && exactCovers(s.Version, r.Version) && exactCovers(s.Kind, r.Kind) &&
		exactCovers(s.Name, r.Name) && exactCovers(s.Namespace, r.Namespace)
}

func exactCovers(s, r string) bool { return s == "" || s == r }

func globCovers(s, r string) bool {
	if s == r || s == "*" {
		return true
	}
	if hasGlobMeta(s) && !hasGlobMeta(r) {
		return globmatch.Match(s, r)
	}
	return false
}

func regexCovers(s, r string) bool {
	if s == "" || s == ".*" || s == r {
		return true
	}
	if r != "" && isRegexLiteral(r) {
		re, err := regexp.Compile("^(?:" + s + ")$")
		return err == nil && re.MatchString(r)
	}
	return false
}

// compileSelector builds a matcher.
//
//   - glob (Argo CD): group and kind are gobwas globs, as argo-cd
//     util/glob/glob.go Match compiles them; name and namespace are exact and
//     empty means any (util/argo/diff/ignore.go, diff_normalizer.go).
//   - regex (Flux): every field is an anchored regex, evaluated by
//     fluxcd/pkg/ssa/jsondiff (selector.go), the very code the controllers run.
//   - exact: plain equality, empty means any.
func compileSelector(s model.Selector) *matcher {
	m := &matcher{sel: s}
	switch s.Syntax {
	case model.MatchRegex:
		sr, err := jsondiff.NewSelectorRegex(&jsondiff.Selector{
			Group: s.Group, Version: s.Version, Kind: s.Kind, Name: s.Name, Namespace: s.Namespace,
			LabelSelector: s.LabelSelector, AnnotationSelector: s.AnnotationSelector,
		})
		if err != nil {
			m.err = err
			return m
		}
		m.match = sr.MatchUnstructured
		m.gk = func(g, k string) bool { return sr.MatchGVK(g, s.Version, k) }
		gre, _ := regexp.Compile("^(?:" + s.Group + ")$")
		m.group = func(g string) bool { return s.Group == "" || gre.MatchString(g) }
		if isRegexLiteral(s.Kind) && s.Kind != "" {
			m.literalKind = s.Kind
		}
		if isRegexLiteral(s.Name) && s.Name != "" {
			m.literalName = s.Name
		}
		m.allKinds = (s.Kind == "" || s.Kind == ".*") && (s.Group == "" || s.Group == ".*")
	default:
		var gm, km func(string) bool
		var err error
		if s.Syntax == model.MatchGlob {
			if gm, err = globMatcher(s.Group); err != nil {
				m.err = fmt.Errorf("invalid group glob %q: %w", s.Group, err)
				return m
			}
			if km, err = globMatcher(s.Kind); err != nil {
				m.err = fmt.Errorf("invalid kind glob %q: %w", s.Kind, err)
				return m
			}
			if !hasGlobMeta(s.Kind) && s.Kind != "" {
				m.literalKind = s.Kind
			}
			m.literalName = s.Name // Argo CD names are exact
			m.allKinds = (s.Kind == "" || s.Kind == "*") && (s.Group == "" || s.Group == "*")
		} else {
			gm, km = exactMatcher(s.Group), exactMatcher(s.Kind)
			if s.Kind != "" {
				m.literalKind = s.Kind
			}
			m.literalName = s.Name
			m.allKinds = s.Kind == "" && s.Group == ""
		}
		ls, err := parseSelector(s.LabelSelector)
		if err != nil {
			m.err = fmt.Errorf("invalid label selector: %w", err)
			return m
		}
		as, err := parseSelector(s.AnnotationSelector)
		if err != nil {
			m.err = fmt.Errorf("invalid annotation selector: %w", err)
			return m
		}
		m.gk = func(g, k string) bool { return gm(g) && km(k) }
		m.group = gm
		nm, nsm := exactMatcher(s.Name), exactMatcher(s.Namespace)
		m.match = func(u *unstructured.Unstructured) bool {
			gvk := u.GroupVersionKind()
			return km(gvk.Kind) && gm(gvk.Group) && nm(u.GetName()) && nsm(u.GetNamespace()) &&
				(s.Version == "" || s.Version == gvk.Version) &&
				(ls == nil || ls.Matches(labels.Set(u.GetLabels()))) &&
				(as == nil || as.Matches(labels.Set(u.GetAnnotations())))
		}
	}
	return m
}

func parseSelector(s string) (labels.Selector, error) {
	if s == "" {
		return nil, nil
	}
	return labels.Parse(s)
}

func exactMatcher(want string) func(string) bool {
	if want == "" {
		return func(string) bool { return true }
	}
	return func(got string) bool { return got == want }
}

// globMatcher mirrors argo-cd util/glob/glob.go Match as
// util/argo/normalizers/diff_normalizer.go (ignoreNormalizer.Normalize) calls
// it for group and kind: the pattern is compiled without separators, so ""
// matches only the core group "" and a literal matches itself. A pattern that
// does not compile matches nothing in Argo; here it is reported as invalid.
func globMatcher(pattern string) (func(string) bool, error) {
	if !hasGlobMeta(pattern) {
		return func(got string) bool { return got == pattern }, nil
	}
	g, err := globmatch.Compile(pattern)
	if err != nil {
		return nil, err
	}
	return g.Match, nil
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[]{}\\!") }

var regexMeta = regexp.MustCompile(`[\\.+*?()|\[\]{}^$]`)

func isRegexLiteral(s string) bool { return !regexMeta.MatchString(s) }
