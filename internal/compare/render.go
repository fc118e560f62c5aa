package compare

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Group collects the translations of one source object (an Application,
// argocd-cm, a Kustomization, a HelmRelease, or a file).
type Group struct {
	Source string // "Application argocd/shop"
	Name   string // "shop"
	Items  []Translation
}

// Groups groups translations by source object, sorted by source.
func Groups(trs []Translation) []*Group {
	m := map[string]*Group{}
	var out []*Group
	for _, t := range trs {
		src := t.From.Origin.Object
		if src == "" {
			src = t.From.Origin.File
		}
		g, ok := m[src]
		if !ok {
			g = &Group{Source: src, Name: objectName(src)}
			m[src] = g
			out = append(out, g)
		}
		g.Items = append(g.Items, t)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out
}

// objectName takes "shop" from "Application argocd/shop".
func objectName(ref string) string {
	f := strings.Fields(ref)
	if len(f) == 0 {
		return "translated"
	}
	n := f[len(f)-1]
	if i := strings.LastIndex(n, "/"); i >= 0 {
		n = n[i+1:]
	}
	if i := strings.LastIndexAny(n, `\/`); i >= 0 {
		n = n[i+1:]
	}
	n = strings.TrimSuffix(strings.TrimSuffix(n, ".yaml"), ".yml")
	if n == "" {
		return "translated"
	}
	return n
}

// Encode writes YAML documents separated by "---", indented by two.
func Encode(docs []*yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	for i, doc := range docs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		var one bytes.Buffer
		enc := yaml.NewEncoder(&one)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
		buf.Write(one.Bytes())
	}
	return buf.Bytes(), nil
}

// Scalar is a string node.
func Scalar(v string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	return n
}

// Mapping is a mapping node of key, value pairs (values are strings or
// nodes).
func Mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		var v *yaml.Node
		switch x := kv[i+1].(type) {
		case string:
			v = Scalar(x)
		case *yaml.Node:
			v = x
		}
		n.Content = append(n.Content, Scalar(kv[i].(string)), v)
	}
	return n
}

// Seq is a sequence node.
func Seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

// StrSeq is a sequence of strings.
func StrSeq(ss []string) *yaml.Node {
	n := Seq()
	for _, s := range ss {
		n.Content = append(n.Content, Scalar(s))
	}
	return n
}

// Comments renders the head comment of one translated rule.
func Comments(t Translation) string {
	lines := []string{"from " + t.From.Origin.String()}
	for _, l := range t.Lossy {
		lines = append(lines, "lossy: "+l)
	}
	for _, u := range t.Untranslatable {
		lines = append(lines, "untranslatable: "+u)
	}
	return strings.Join(lines, "\n")
}

// RuleEntries lists a group's translated rules for an engine's object:
// one entry a rule, built by entry, the first entry of each translation
// headed by its comments. left holds the comments of the translations that
// gave no rule, for Document to put below the object.
func RuleEntries(g *Group, entry func(model.Rule) *yaml.Node) (list *yaml.Node, left []string) {
	list = Seq()
	for _, t := range g.Items {
		if len(t.To) == 0 {
			left = append(left, Comments(t))
			continue
		}
		for i, r := range t.To {
			e := entry(r)
			if i == 0 {
				e.HeadComment = Comments(t)
			}
			list.Content = append(list.Content, e)
		}
	}
	return list, left
}

// Document makes obj one YAML document for Encode, the comments of the
// rules that could not be written into it (left) below it.
func Document(obj *yaml.Node, left []string) *yaml.Node {
	if len(left) > 0 {
		obj.FootComment = strings.Join(left, "\n\n")
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{obj}}
}

// DocHeader names the source and says once the behaviour notes that
// apply to its rules.
func DocHeader(g *Group, what string) string {
	lines := []string{fmt.Sprintf("Translated from %s.", g.Source), what}
	seen := map[string]bool{}
	for _, t := range g.Items {
		for _, n := range t.Notes {
			if !seen[n] && len(t.To) > 0 {
				seen[n] = true
				lines = append(lines, "note: "+n)
			}
		}
	}
	return strings.Join(lines, "\n")
}

// Dedupe sorts strings and drops repeats.
func Dedupe(in []string) []string { return dedupe(in) }
