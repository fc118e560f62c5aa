package audit

import (
	"regexp"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/globmatch"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	if model.HasGlobMeta(s) && !model.HasGlobMeta(r) {
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

// compileSelector builds a matcher: matching is the model's
// (model.Selector.Compile, with each engine's syntax: Argo CD globs, Flux
// regexes); what is added here is what the index and the checks need to
// know about the selector's shape.
func compileSelector(s model.Selector) *matcher {
	m := &matcher{sel: s}
	cm, err := s.Compile()
	if err != nil {
		m.err = err
		return m
	}
	m.match, m.gk, m.group = cm.Matches, cm.MatchesGK, cm.MatchesGroup
	switch s.Syntax {
	case model.MatchRegex:
		// Flux anchors every selector regex itself (fluxcd/pkg ssa/jsondiff
		// selector.go: "^(?:" + s + ")$"), so "^Pod$" names one kind too.
		if k := strings.TrimSuffix(strings.TrimPrefix(s.Kind, "^"), "$"); isRegexLiteral(k) && k != "" {
			m.literalKind = k
		}
		if isRegexLiteral(s.Name) && s.Name != "" {
			m.literalName = s.Name
		}
		m.allKinds = (s.Kind == "" || s.Kind == ".*") && (s.Group == "" || s.Group == ".*")
	case model.MatchGlob:
		if !model.HasGlobMeta(s.Kind) && s.Kind != "" {
			m.literalKind = s.Kind
		}
		m.literalName = s.Name // Argo CD names are exact
		m.allKinds = (s.Kind == "" || s.Kind == "*") && (s.Group == "" || s.Group == "*")
	default:
		if s.Kind != "" {
			m.literalKind = s.Kind
		}
		m.literalName = s.Name
		m.allKinds = s.Kind == "" && s.Group == ""
	}
	return m
}

var regexMeta = regexp.MustCompile(`[\\.+*?()|\[\]{}^$]`)

func isRegexLiteral(s string) bool { return !regexMeta.MatchString(s) }
