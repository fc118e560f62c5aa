package suggest

import (
	"bytes"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
)

// WithRule returns a copy of an engine object of the engine's (a holder)
// with the suggestion's rule for the engine appended to its rule list,
// and the settings the rule needs added.
func (s Suggestion) WithRule(e suggestapi.Semantics, holder *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	h, ok := e.Holder(holder.GetKind())
	if !ok {
		return nil, fmt.Errorf("%s holds no %s rule", holder.GetKind(), e.Title)
	}
	rule := s.Rules[e.Engine]
	if rule == nil {
		return nil, fmt.Errorf("no %s rule for %s", e.Title, s.FieldPath)
	}
	out := holder.DeepCopy()
	if err := add(out.Object, h, rule); err != nil {
		return nil, err
	}
	return out, nil
}

// add appends rule to obj's rule list and adds the values it needs.
func add(obj map[string]any, h suggestapi.Holder, rule suggestapi.Rule) error {
	rules, _, err := unstructured.NestedSlice(obj, h.Rules...)
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedSlice(obj, append(rules, rule.Entry()), h.Rules...); err != nil {
		return err
	}
	for _, set := range rule.Settings() {
		have, _, _ := unstructured.NestedStringSlice(obj, set.Path...)
		found := false
		for _, v := range have {
			found = found || v == set.Value || (set.Has != nil && set.Has(v))
		}
		if found {
			continue
		}
		if err := unstructured.SetNestedStringSlice(obj, append(have, set.Value), set.Path...); err != nil {
			return err
		}
	}
	return nil
}

// YAML renders an engine object with the suggestion's rule (WithRule),
// the reason as a comment directly above the rule (audit's
// missing-justification check).
func (s Suggestion) YAML(e suggestapi.Semantics, withRule *unstructured.Unstructured) ([]byte, error) {
	h, ok := e.Holder(withRule.GetKind())
	if !ok {
		return nil, fmt.Errorf("%s holds no %s rule", withRule.GetKind(), e.Title)
	}
	return commented(withRule.Object, h.Rules, s.Reason)
}

// Snippet is the part of a holder of kind to add, as a person pastes it:
// the engine's rule with the reason above it, and its settings.
func (s Suggestion) Snippet(e suggestapi.Semantics, kind string) string {
	h, ok := e.Holder(kind)
	rule := s.Rules[e.Engine]
	if !ok || rule == nil {
		return ""
	}
	obj := map[string]any{}
	if err := add(obj, h, rule); err != nil {
		return ""
	}
	b, err := commented(obj, h.Rules, s.Reason)
	if err != nil {
		return ""
	}
	return string(b)
}

// commented encodes obj in block style with two-space indents, comment
// above the last item of the list at path.
func commented(obj map[string]any, path []string, comment string) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(obj); err != nil {
		return nil, err
	}
	if seq := find(&n, path); seq != nil && seq.Kind == yaml.SequenceNode && len(seq.Content) > 0 {
		seq.Content[len(seq.Content)-1].HeadComment = comment
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
