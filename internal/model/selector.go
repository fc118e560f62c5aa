package model

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-drift/kubectl-drift/internal/globmatch"
)

// Describe renders the selector compactly, the same way wherever a rule's
// target is printed (rules, compare, audit): group/kind, then the other
// fields that are set, then the syntax. An empty group is the core group
// for globs (Argo CD) and any group for regexes (Flux).
func (s Selector) Describe() string {
	var parts []string
	gk := s.Kind
	if gk == "" {
		gk = "*"
	}
	switch {
	case s.Syntax == MatchGlob && s.Group == "":
		// Argo CD: empty group is the core group.
	case s.Group == "" && s.Syntax == MatchRegex:
		gk = "(any group)/" + gk
	default:
		gk = s.Group + "/" + gk
	}
	parts = append(parts, gk)
	for _, f := range []struct{ name, v string }{
		{"version", s.Version}, {"ns", s.Namespace}, {"name", s.Name},
		{"labels", s.LabelSelector}, {"annotations", s.AnnotationSelector},
	} {
		if f.v != "" {
			parts = append(parts, f.name+"="+f.v)
		}
	}
	if s.Syntax != "" {
		parts = append(parts, "("+string(s.Syntax)+")")
	}
	return strings.Join(parts, " ")
}

// Matcher is a compiled Selector.
type Matcher struct {
	group, version, kind, name, namespace func(string) bool
	labels, annotations                   labels.Selector
}

// Compile compiles the selector with its syntax's semantics:
//
//   - MatchGlob (Argo CD): group and kind are gobwas globs, compiled as
//     argo-cd util/glob/glob.go Match does (internal/globmatch), so "" is
//     only the core group; name and namespace are exact, "" meaning any
//     (util/argo/normalizers/diff_normalizer.go ignoreNormalizer.Normalize).
//   - MatchRegex (Flux): every field is a regex anchored as ^(?:...)$ and
//     "" matches everything, the group included (fluxcd/pkg
//     ssa/jsondiff/selector.go NewSelectorRegex, anchorRegex, MatchGVK);
//     selector_test.go checks parity with that code.
//   - MatchExact and "": plain equality, "" meaning any.
//
// Label and annotation selectors are Kubernetes label selector expressions
// in every syntax.
func (s Selector) Compile() (*Matcher, error) {
	m := &Matcher{}
	var err error
	exactFields := func() {
		m.version, m.name, m.namespace = exact(s.Version), exact(s.Name), exact(s.Namespace)
	}
	switch s.Syntax {
	case MatchGlob:
		if m.group, err = glob(s.Group); err != nil {
			return nil, fmt.Errorf("invalid group glob %q: %w", s.Group, err)
		}
		if m.kind, err = glob(s.Kind); err != nil {
			return nil, fmt.Errorf("invalid kind glob %q: %w", s.Kind, err)
		}
		exactFields()
	case MatchRegex:
		for _, f := range []struct {
			what, p string
			dst     *func(string) bool
		}{{"group", s.Group, &m.group}, {"version", s.Version, &m.version}, {"kind", s.Kind, &m.kind},
			{"name", s.Name, &m.name}, {"namespace", s.Namespace, &m.namespace}} {
			if *f.dst, err = anchored(f.p); err != nil {
				return nil, fmt.Errorf("invalid %s regex: %w", f.what, err)
			}
		}
	default:
		m.group, m.kind = exact(s.Group), exact(s.Kind)
		exactFields()
	}
	if m.labels, err = parseLabels(s.LabelSelector); err != nil {
		return nil, fmt.Errorf("invalid label selector: %w", err)
	}
	if m.annotations, err = parseLabels(s.AnnotationSelector); err != nil {
		return nil, fmt.Errorf("invalid annotation selector: %w", err)
	}
	return m, nil
}

// Matches reports whether the selector selects obj. A selector that does
// not compile selects nothing (the engines reject or skip such rules).
func (s Selector) Matches(obj *unstructured.Unstructured) bool {
	m, err := s.Compile()
	return err == nil && m.Matches(obj)
}

// Matches reports whether the compiled selector selects obj.
func (m *Matcher) Matches(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return m.namespace(obj.GetNamespace()) && m.name(obj.GetName()) &&
		m.MatchesGK(gvk.Group, gvk.Kind) && m.version(gvk.Version) &&
		(m.labels == nil || m.labels.Matches(labels.Set(obj.GetLabels()))) &&
		(m.annotations == nil || m.annotations.Matches(labels.Set(obj.GetAnnotations())))
}

// MatchesGK reports whether group and kind are selected (the other fields
// not considered).
func (m *Matcher) MatchesGK(group, kind string) bool { return m.group(group) && m.kind(kind) }

// MatchesGroup reports whether group is selected.
func (m *Matcher) MatchesGroup(group string) bool { return m.group(group) }

// MatchesVersion reports whether version is selected.
func (m *Matcher) MatchesVersion(version string) bool { return m.version(version) }

func exact(want string) func(string) bool {
	if want == "" {
		return func(string) bool { return true }
	}
	return func(got string) bool { return got == want }
}

// glob compiles an Argo CD group/kind pattern; a pattern without glob
// syntax is matched literally ("" is the core group only).
func glob(pattern string) (func(string) bool, error) {
	if !HasGlobMeta(pattern) {
		return func(got string) bool { return got == pattern }, nil
	}
	g, err := globmatch.Compile(pattern)
	if err != nil {
		return nil, err
	}
	return g.Match, nil
}

// HasGlobMeta reports whether a pattern uses glob syntax.
func HasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[]{}\\!") }

func anchored(pattern string) (func(string) bool, error) {
	if pattern == "" {
		return func(string) bool { return true }, nil
	}
	re, err := regexp.Compile("^(?:" + pattern + ")$")
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}

func parseLabels(s string) (labels.Selector, error) {
	if s == "" {
		return nil, nil
	}
	return labels.Parse(s)
}
