package compare

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Output forms of `compare --to`.
const (
	FluxKustomization = "Kustomization"
	FluxHelmRelease   = "HelmRelease"
	ArgoApplication   = "Application"
	ArgoConfigMap     = "argocd-cm"
)

// RenderOptions tune the YAML emitted by Render.
type RenderOptions struct {
	// Form is Kustomization or HelmRelease (to Flux), Application or
	// argocd-cm (to Argo CD).
	Form string
	// Namespace of the emitted engine objects (flux-system, argocd).
	Namespace string
}

// group collects the translations of one source object (an Application,
// argocd-cm, a Kustomization, a HelmRelease, or a file).
type group struct {
	source string // "Application argocd/shop"
	name   string // "shop"
	items  []Translation
}

func groupBySource(trs []Translation) []*group {
	m := map[string]*group{}
	var out []*group
	for _, t := range trs {
		src := t.From.Origin.Object
		if src == "" {
			src = t.From.Origin.File
		}
		g, ok := m[src]
		if !ok {
			g = &group{source: src, name: objectName(src)}
			m[src] = g
			out = append(out, g)
		}
		g.items = append(g.items, t)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].source < out[j].source })
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

// Render writes translations as ready-to-merge YAML documents, one per
// source object, with a `# lossy:` comment on every inexact translation and
// an `# untranslatable:` comment for every part left out.
func Render(trs []Translation, to model.Engine, o RenderOptions) ([]byte, error) {
	var buf bytes.Buffer
	groups := groupBySource(trs)
	if to == model.EngineArgoCD && o.Form == ArgoConfigMap && len(groups) > 1 {
		// There is one argocd-cm: merge every source into it.
		all := &group{source: "every rule source (see the comment on each key)", name: "argocd-cm"}
		for _, g := range groups {
			all.items = append(all.items, g.items...)
		}
		groups = []*group{all}
	}
	for i, g := range groups {
		var doc *yaml.Node
		var err error
		switch {
		case to == model.EngineFlux:
			doc = fluxDoc(g, o)
		case o.Form == ArgoConfigMap:
			doc, err = argoCMDoc(g, o)
		default:
			doc = argoAppDoc(g, o)
		}
		if err != nil {
			return nil, err
		}
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

func scalar(v string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	return n
}

func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		var v *yaml.Node
		switch x := kv[i+1].(type) {
		case string:
			v = scalar(x)
		case *yaml.Node:
			v = x
		}
		n.Content = append(n.Content, scalar(kv[i].(string)), v)
	}
	return n
}

func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

func strSeq(ss []string) *yaml.Node {
	n := seq()
	for _, s := range ss {
		n.Content = append(n.Content, scalar(s))
	}
	return n
}

// comments renders the head comment of one translated rule.
func comments(t Translation) string {
	lines := []string{"from " + t.From.Origin.String()}
	for _, l := range t.Lossy {
		lines = append(lines, "lossy: "+l)
	}
	for _, u := range t.Untranslatable {
		lines = append(lines, "untranslatable: "+u)
	}
	return strings.Join(lines, "\n")
}

// docHeader names the source and says once the behaviour notes that
// apply to its rules.
func docHeader(g *group, what string) string {
	lines := []string{fmt.Sprintf("Translated from %s.", g.source), what}
	seen := map[string]bool{}
	for _, t := range g.items {
		for _, n := range t.Notes {
			if !seen[n] && len(t.To) > 0 {
				seen[n] = true
				lines = append(lines, "note: "+n)
			}
		}
	}
	return strings.Join(lines, "\n")
}

func fluxDoc(g *group, o RenderOptions) *yaml.Node {
	ns := o.Namespace
	if ns == "" {
		ns = "flux-system"
	}
	var ignore = seq()
	var left []string
	for _, t := range g.items {
		if len(t.To) == 0 {
			left = append(left, comments(t))
			continue
		}
		for i, r := range t.To {
			entry := mapping("paths", strSeq(r.JSONPointers))
			if tg := fluxTarget(r.Target); tg != nil {
				entry.Content = append(entry.Content, scalar("target"), tg)
			}
			if i == 0 {
				entry.HeadComment = comments(t)
			}
			ignore.Content = append(ignore.Content, entry)
		}
	}
	// One document per holder: a HelmRelease's spec.driftDetection or a
	// Kustomization's spec.ignore, merged into the object that deploys the
	// same objects (every one of them for argocd-cm rules).
	apiVersion, kind, spec := "kustomize.toolkit.fluxcd.io/v1", "Kustomization", mapping("ignore", ignore)
	field, flux29 := "spec.ignore", " (Flux >= 2.9)"
	if o.Form == FluxHelmRelease {
		dd := mapping("mode", "enabled", "ignore", ignore)
		dd.Content[0].HeadComment = "drift detection must be enabled (or warn) for ignore rules to matter"
		apiVersion, kind, spec = "helm.toolkit.fluxcd.io/v2", "HelmRelease", mapping("driftDetection", dd)
		field, flux29 = "spec.driftDetection", ""
	}
	doc := mapping("apiVersion", apiVersion, "kind", kind,
		"metadata", mapping("name", g.name, "namespace", ns), "spec", spec)
	what := "Merge " + field + " into the " + kind + " that deploys the same objects" + flux29 + "."
	if strings.HasPrefix(g.source, "ConfigMap ") {
		what = "argocd-cm rules apply to every Application: merge " + field + " into every " + kind + flux29 + "."
	}
	doc.HeadComment = docHeader(g, what)
	if len(ignore.Content) == 0 {
		// An empty list would still be valid YAML; say why it is empty.
		doc.Content[len(doc.Content)-1].HeadComment = "nothing here could be translated"
	}
	if len(left) > 0 {
		doc.FootComment = strings.Join(left, "\n\n")
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}
}

func fluxTarget(s model.Selector) *yaml.Node {
	n := mapping()
	for _, kv := range [][2]string{{"group", s.Group}, {"version", s.Version}, {"kind", s.Kind}, {"name", s.Name}, {"namespace", s.Namespace},
		{"labelSelector", s.LabelSelector}, {"annotationSelector", s.AnnotationSelector}} {
		if kv[1] != "" {
			n.Content = append(n.Content, scalar(kv[0]), scalar(kv[1]))
		}
	}
	if len(n.Content) == 0 {
		return nil
	}
	return n
}

func argoAppDoc(g *group, o RenderOptions) *yaml.Node {
	ns := o.Namespace
	if ns == "" {
		ns = "argocd"
	}
	list := seq()
	var left []string
	for _, t := range g.items {
		if len(t.To) == 0 {
			left = append(left, comments(t))
			continue
		}
		for i, r := range t.To {
			e := mapping()
			if r.Target.Group != "" {
				e.Content = append(e.Content, scalar("group"), scalar(r.Target.Group))
			}
			e.Content = append(e.Content, scalar("kind"), scalar(r.Target.Kind))
			if r.Target.Name != "" {
				e.Content = append(e.Content, scalar("name"), scalar(r.Target.Name))
			}
			if r.Target.Namespace != "" {
				e.Content = append(e.Content, scalar("namespace"), scalar(r.Target.Namespace))
			}
			e.Content = append(e.Content, scalar("jsonPointers"), strSeq(r.JSONPointers))
			if i == 0 {
				e.HeadComment = comments(t)
			}
			list.Content = append(list.Content, e)
		}
	}
	doc := mapping("apiVersion", "argoproj.io/v1alpha1", "kind", "Application",
		"metadata", mapping("name", g.name, "namespace", ns),
		"spec", mapping("ignoreDifferences", list))
	doc.HeadComment = docHeader(g, "Merge spec.ignoreDifferences into the Application that deploys the same objects.")
	if len(left) > 0 {
		doc.FootComment = strings.Join(left, "\n\n")
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}
}

// argoCMDoc writes argocd-cm keys resource.customizations.ignoreDifferences.<group_kind>
// (argo-cd util/settings/settings.go: the key suffix is split on "_" by
// convertToOverrideKey; a bare kind is the core group; "all" is */*).
// ConfigMap keys admit no glob characters and carry no name or namespace,
// so only literal group/kind targets without names fit.
func argoCMDoc(g *group, o RenderOptions) (*yaml.Node, error) {
	ns := o.Namespace
	if ns == "" {
		ns = "argocd"
	}
	type entry struct {
		ptrs     []string
		comments []string
	}
	keys := map[string]*entry{}
	var left []string
	for _, t := range g.items {
		if len(t.To) == 0 {
			left = append(left, comments(t))
			continue
		}
		reported := false
		for _, r := range t.To {
			key, why := cmKey(r.Target)
			if why != "" {
				if !reported {
					tt := t
					tt.Untranslatable = append(append([]string(nil), t.Untranslatable...), "not expressible as an argocd-cm key: "+why+" (use --form Application)")
					left = append(left, comments(tt))
					reported = true
				}
				continue
			}
			e := keys[key]
			if e == nil {
				e = &entry{}
				keys[key] = e
			}
			e.ptrs = append(e.ptrs, r.JSONPointers...)
			tt := t
			if kind, _, _ := strings.Cut(t.From.Origin.Object, " "); kind == "Kustomization" || kind == "HelmRelease" {
				tt.Lossy = append(append([]string(nil), t.Lossy...), fmt.Sprintf("scope widens: an argocd-cm key applies to every Application, the rule applied only to the objects of %s", t.From.Origin.Object))
			}
			e.comments = append(e.comments, comments(tt))
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	data := mapping()
	for _, k := range names {
		e := keys[k]
		var vb bytes.Buffer
		venc := yaml.NewEncoder(&vb)
		venc.SetIndent(2)
		if err := venc.Encode(map[string][]string{"jsonPointers": dedupe(e.ptrs)}); err != nil {
			return nil, err
		}
		v := vb.Bytes()
		kn := scalar("resource.customizations.ignoreDifferences." + k)
		kn.HeadComment = strings.Join(e.comments, "\n")
		vn := scalar(string(v))
		vn.Style = yaml.LiteralStyle
		data.Content = append(data.Content, kn, vn)
	}
	doc := mapping("apiVersion", "v1", "kind", "ConfigMap",
		"metadata", mapping("name", "argocd-cm", "namespace", ns),
		"data", data)
	doc.HeadComment = docHeader(g, "Merge data into argocd-cm; these keys apply to every Application.")
	if len(left) > 0 {
		doc.FootComment = strings.Join(left, "\n\n")
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}, nil
}

func cmKey(s model.Selector) (string, string) {
	if s.Name != "" || s.Namespace != "" {
		return "", "it selects a name or namespace"
	}
	if s.Group == "*" && s.Kind == "*" {
		return "all", ""
	}
	if strings.ContainsAny(s.Group+s.Kind, `*?[]{}\,_`) {
		return "", fmt.Sprintf("group %q / kind %q are not plain names", s.Group, s.Kind)
	}
	if s.Group == "" {
		return s.Kind, ""
	}
	return s.Group + "_" + s.Kind, ""
}
