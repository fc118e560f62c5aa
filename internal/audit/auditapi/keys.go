package auditapi

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// UnknownKey returns a problem for the first key of item (sorted) that
// allowed does not list, prefix naming where item is ("target."), or "".
// A misspelt key ("jsonPointer") is dropped silently by the engines'
// decoders, leaving a rule that ignores nothing or everything; the
// adapters read typed structs and cannot see it, so the audit looks at the
// rule's own map in the manifest.
func UnknownKey(item map[string]any, allowed []string, prefix string) string {
	var bad []string
	for k := range item {
		if !slices.Contains(allowed, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	sort.Strings(bad)
	known := slices.Clone(allowed)
	sort.Strings(known)
	msg := fmt.Sprintf("unknown key %q: the engine drops it silently", prefix+bad[0])
	if n := Nearest(bad[0], known); n != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", prefix+n)
	}
	return msg
}

// MapAt returns the map at an origin field (".spec.ignore[2]") of doc, or
// nil.
func MapAt(doc source.Document, field string) map[string]any {
	tok, ok := fieldTokens(field)
	if !ok || doc.Object == nil {
		return nil
	}
	v, _ := jsonpointer.Walk(doc.Object.Object, tok)
	m, _ := v.(map[string]any)
	return m
}

var fieldStep = regexp.MustCompile(`\.([A-Za-z0-9_]+)|\[(\d+)\]`)

// fieldTokens turns an origin field such as ".spec.ignore[2]" into
// tokens; ok is false for other shapes.
func fieldTokens(field string) ([]string, bool) {
	if !strings.HasPrefix(field, ".") {
		return nil, false
	}
	var out []string
	rest := field
	for rest != "" {
		m := fieldStep.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			return nil, false
		}
		if m[2] >= 0 {
			out = append(out, rest[m[2]:m[3]])
		} else {
			out = append(out, rest[m[4]:m[5]])
		}
		rest = rest[m[1]:]
	}
	return out, true
}

// ObjectKind returns the kind part of an origin object "Kind ns/name".
func ObjectKind(obj string) string {
	k, _, _ := strings.Cut(obj, " ")
	return k
}

// ObjectNamespace returns the namespace part of an origin object
// "Kind ns/name".
func ObjectNamespace(obj string) string {
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

// ObjectOf names a manifest as rule origins do: "Kind ns/name", or "Kind
// name" when it has no namespace.
func ObjectOf(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return u.GetKind() + " " + ns + "/" + u.GetName()
	}
	return u.GetKind() + " " + u.GetName()
}
