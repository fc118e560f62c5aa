package suggest

import (
	"bytes"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Engine object kinds a rule is added to.
const (
	KindApplication   = "Application"
	KindKustomization = "Kustomization"
	KindHelmRelease   = "HelmRelease"
)

func (r ArgoRule) entry() map[string]any {
	m := map[string]any{"kind": r.Kind}
	if r.Group != "" {
		m["group"] = r.Group
	}
	if r.Name != "" {
		m["name"] = r.Name
	}
	if r.Namespace != "" {
		m["namespace"] = r.Namespace
	}
	if len(r.JSONPointers) > 0 {
		m["jsonPointers"] = toAny(r.JSONPointers)
	}
	if len(r.JQPathExpressions) > 0 {
		m["jqPathExpressions"] = toAny(r.JQPathExpressions)
	}
	if len(r.ManagedFieldsManagers) > 0 {
		m["managedFieldsManagers"] = toAny(r.ManagedFieldsManagers)
	}
	return m
}

func (r FluxRule) entry() map[string]any {
	t := map[string]any{"kind": r.Target.Kind, "name": r.Target.Name}
	if r.Target.Group != "" {
		t["group"] = r.Target.Group
	}
	if r.Target.Namespace != "" {
		t["namespace"] = r.Target.Namespace
	}
	return map[string]any{"paths": toAny(r.Paths), "target": t}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// ruleLocation is where a rule goes in an engine object.
func ruleLocation(kind string) []string {
	switch kind {
	case KindApplication:
		return []string{"spec", "ignoreDifferences"}
	case KindKustomization:
		return []string{"spec", "ignore"}
	case KindHelmRelease:
		return []string{"spec", "driftDetection", "ignore"}
	}
	return nil
}

func (s Suggestion) entryFor(kind string) map[string]any {
	if kind == KindApplication {
		return s.Argo.entry()
	}
	return s.Flux.entry()
}

// WithRule returns a copy of an engine object (Application,
// Kustomization, HelmRelease) with the suggestion's rule appended, and
// RespectIgnoreDifferences=true added to an Application when needed.
func (s Suggestion) WithRule(owner *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	kind := owner.GetKind()
	loc := ruleLocation(kind)
	if loc == nil {
		return nil, fmt.Errorf("%s is not an Application, Kustomization or HelmRelease", kind)
	}
	out := owner.DeepCopy()
	rules, _, err := unstructured.NestedSlice(out.Object, loc...)
	if err != nil {
		return nil, err
	}
	rules = append(rules, s.entryFor(kind))
	if err := unstructured.SetNestedSlice(out.Object, rules, loc...); err != nil {
		return nil, err
	}
	if kind == KindApplication && s.Argo.RespectIgnoreDifferences {
		opts, _, _ := unstructured.NestedStringSlice(out.Object, "spec", "syncPolicy", "syncOptions")
		have := false
		for _, o := range opts {
			if strings.EqualFold(strings.ReplaceAll(o, " ", ""), "RespectIgnoreDifferences=true") {
				have = true
			}
		}
		if !have {
			opts = append(opts, "RespectIgnoreDifferences=true")
			if err := unstructured.SetNestedStringSlice(out.Object, opts, "spec", "syncPolicy", "syncOptions"); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// YAML renders an engine object with the suggestion's rule, the reason as
// a comment directly above the rule (audit's missing-justification check).
func (s Suggestion) YAML(withRule *unstructured.Unstructured) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(withRule.Object); err != nil {
		return nil, err
	}
	if seq := find(&n, ruleLocation(withRule.GetKind())); seq != nil && seq.Kind == yaml.SequenceNode && len(seq.Content) > 0 {
		seq.Content[len(seq.Content)-1].HeadComment = s.Reason
		seq.Style = 0
	}
	blockStyle(&n)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Snippet is the part of the engine object to add, as a person pastes it.
func (s Suggestion) Snippet(kind string) string {
	loc := ruleLocation(kind)
	if loc == nil {
		return ""
	}
	var b strings.Builder
	indent := ""
	for _, k := range loc {
		b.WriteString(indent + k + ":\n")
		indent += "  "
	}
	b.WriteString(indent + "# " + s.Reason + "\n")
	body := blockYAML(s.entryFor(kind))
	for i, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		p := "  "
		if i == 0 {
			p = "- "
		}
		b.WriteString(indent + p + line + "\n")
	}
	if kind == KindApplication && s.Argo.RespectIgnoreDifferences {
		b.WriteString("  syncPolicy:\n    syncOptions:\n      - RespectIgnoreDifferences=true\n")
	}
	return b.String()
}

func blockYAML(v any) string {
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	_ = enc.Encode(v)
	_ = enc.Close()
	return out.String()
}

func find(n *yaml.Node, path []string) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, p := range path {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == p {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

func blockStyle(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style &^= yaml.FlowStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}
