package audit

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// The keys each rule shape accepts. A misspelt key ("jsonPointer") is
// dropped silently by both engines' decoders, leaving a rule that ignores
// nothing or everything; the adapters read typed structs and cannot see
// it, so the audit looks at the rule's own map in the manifest.
var (
	// argo-cd pkg/apis/application/v1alpha1/types.go ResourceIgnoreDifferences.
	argoIgnoreKeys = keySet("group", "kind", "name", "namespace", "jsonPointers", "jqPathExpressions", "managedFieldsManagers")
	// argo-cd util/settings/settings.go: an ignoreDifferences customization
	// value is an OverrideIgnoreDiff.
	argoCMIgnoreKeys = keySet("jsonPointers", "jqPathExpressions", "managedFieldsManagers")
	// kustomize-controller api/v1 IgnoreRule and fluxcd/pkg/apis/kustomize
	// Selector; helm-controller api/v2 IgnoreRule has the same shape.
	fluxIgnoreKeys   = keySet("paths", "target")
	fluxSelectorKeys = keySet("group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector")
)

func keySet(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
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

// unknownKeys returns a problem for keys the rule's shape does not have.
func (a *analysis) unknownKeys(r *ruleInfo) string {
	d, ok := a.docFor(r.Origin)
	if !ok {
		return ""
	}
	var item map[string]any
	var allowed map[string]bool
	switch r.Type {
	case rtIgnoreDifferences:
		if isArgoGlobal(r.Rule) {
			key, ok := strings.CutPrefix(r.Origin.Field, "data[")
			if !ok || !strings.HasSuffix(key, "]") || strings.Contains(key, "][") {
				return ""
			}
			key = strings.TrimSuffix(key, "]")
			s, _ := d.Object.Object["data"].(map[string]any)
			v, _ := s[key].(string)
			if err := yaml.Unmarshal([]byte(v), &item); err != nil {
				return ""
			}
			allowed = argoCMIgnoreKeys
		} else {
			item = a.mapAt(d, r.Origin.Field)
			allowed = argoIgnoreKeys
		}
	case rtKustomizeIgnore, rtHelmIgnore:
		item = a.mapAt(d, r.Origin.Field)
		allowed = fluxIgnoreKeys
		if t, ok := item["target"].(map[string]any); ok {
			if p := unknownIn(t, fluxSelectorKeys, "target."); p != "" {
				return p
			}
		}
	default:
		return ""
	}
	return unknownIn(item, allowed, "")
}

func unknownIn(item map[string]any, allowed map[string]bool, prefix string) string {
	var bad []string
	for k := range item {
		if !allowed[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	sort.Strings(bad)
	known := make([]string, 0, len(allowed))
	for k := range allowed {
		known = append(known, k)
	}
	sort.Strings(known)
	msg := fmt.Sprintf("unknown key %q: the engine drops it silently", prefix+bad[0])
	if n := nearest(bad[0], known); n != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", prefix+n)
	}
	return msg
}

func (a *analysis) mapAt(d Document, field string) map[string]any {
	tok, ok := fieldTokens(field)
	if !ok {
		return nil
	}
	v, _ := jsonpointer.Walk(d.Object.Object, tok)
	m, _ := v.(map[string]any)
	return m
}

// docFor finds the manifest holding a rule: same file, same object.
func (a *analysis) docFor(o model.Origin) (Document, bool) {
	if a.byOrigin == nil {
		a.byOrigin = map[string]int{}
		for i, d := range a.ix.docs {
			u := d.Object
			a.byOrigin[d.File+"|"+u.GetKind()+" "+qualifiedName(u.GetNamespace(), u.GetName())] = i
		}
	}
	i, ok := a.byOrigin[o.File+"|"+o.Object]
	if !ok {
		return Document{}, false
	}
	return a.ix.docs[i], true
}
