package flux

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/compare"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// The forms of `compare --to flux`.
const (
	FormKustomization = "Kustomization"
	FormHelmRelease   = "HelmRelease"
)

// ReasonManagers says why managedFieldsManagers has no Flux counterpart;
// tests match on its prefix.
const ReasonManagers = "managedFieldsManagers has no Flux equivalent: Flux field ownership already does this " +
	"(server-side apply leaves fields owned only by other managers alone unless Flux owns them too)"

// CompareSemantics is what `compare` needs to know about Flux's rules:
// which have no counterpart anywhere, what an ignore path cannot say of
// another engine's rule, which rules apply to their holder's objects only,
// and the translation of other rules to ignore entries.
func CompareSemantics() *compare.Semantics {
	return &compare.Semantics{
		Syntax:    model.MatchRegex,
		Intrinsic: intrinsic,
		CannotSay: cannotSay,
		Scoped: func(r model.Rule) bool {
			kind, _, _ := strings.Cut(r.Origin.Object, " ")
			return (kind == "Kustomization" || kind == "HelmRelease") && !strings.Contains(r.Origin.Field, "configs.cm[")
		},
		Translator: &compare.Translator{
			Forms:     []string{FormKustomization, FormHelmRelease},
			Translate: translate,
			Render: func(trs []compare.Translation, form string) ([]byte, error) {
				var docs []*yaml.Node
				for _, g := range compare.Groups(trs) {
					docs = append(docs, fluxDoc(g, form))
				}
				return compare.Encode(docs)
			},
		},
	}
}

// intrinsic names Flux mechanisms that have no counterpart whatever their
// content.
func intrinsic(r model.Rule) string {
	switch r.Type {
	case RuleSSAAnnotation:
		return fmt.Sprintf("kustomize.toolkit.fluxcd.io/ssa: %s changes how Flux applies this object; Argo CD has no per-object apply mode that hides drift", r.Value)
	case RuleReconcileDisabled:
		return "kustomize.toolkit.fluxcd.io/reconcile: disabled stops Flux from applying the object; Argo CD has no per-object switch (remove it from the Application instead)"
	case RuleDriftDisabled:
		return "helm.toolkit.fluxcd.io/driftDetection: disabled turns drift detection off for one object; Argo CD has no per-object switch"
	}
	return ""
}

// jqReason says why a jq expression of kind k is no Flux path, "" when it
// is one.
func jqReason(k compare.JQKind) string {
	switch k {
	case compare.JQPath, compare.JQInvalid:
		return ""
	case compare.JQIterate:
		return "iterates over every array item ([]): a Flux path is a plain JSON pointer and cannot say \"every item\""
	case compare.JQSelect:
		return "selects array items by value (select): a Flux path is a JSON pointer that names items by index only"
	}
	return "not a plain path expression: a Flux path is a JSON pointer"
}

// cannotSay names what a Flux ignore path cannot say of another engine's
// rule: jq programs that are not plain paths, field managers. Any selector
// can be written as Flux regexes.
func cannotSay(r model.Rule) compare.Limits {
	var l compare.Limits
	if len(r.JSONPointers) > 0 {
		l.Some = true
	}
	if r.WholeResource && len(r.JSONPointers) == 0 {
		l.Parts = append(l.Parts, "the rule covers the whole object; Flux has no whole-object ignore")
	}
	for _, e := range r.JQPathExpressions {
		k := compare.JQKindOf(e)
		if k == compare.JQPath {
			l.Some = true
		}
		if why := jqReason(k); why != "" {
			l.Parts = append(l.Parts, fmt.Sprintf("jq %s %s", e, why))
		}
	}
	if len(r.Managers) > 0 {
		l.Parts = append(l.Parts, fmt.Sprintf("managedFieldsManagers %s: %s", strings.Join(r.Managers, ", "), ReasonManagers))
	}
	return l
}

// translate says another engine's rule as a Kustomization ignore entry.
func translate(src compare.Source) compare.Translation {
	tr := compare.Translation{From: src.Rule}
	r := src.Rule
	var paths []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, p := range r.JSONPointers {
		add(p)
	}
	for _, e := range r.JQPathExpressions {
		k := compare.JQKindOf(e)
		if k == compare.JQPath {
			p, _ := compare.JQPointer(e)
			add(p)
			continue
		}
		if src.Expand != nil {
			ptrs, n := src.Expand(e)
			if len(ptrs) > 0 {
				for _, p := range ptrs {
					add(p)
				}
				tr.Lossy = append(tr.Lossy, fmt.Sprintf("jq %s expanded to the %d pointer(s) it selects on the %d given object(s) it applies to; %s", e, len(ptrs), n, jqReason(k)))
				continue
			}
		}
		tr.Untranslatable = append(tr.Untranslatable, fmt.Sprintf("jq %s %s", e, jqReason(k)))
	}
	if len(r.Managers) > 0 {
		tr.Untranslatable = append(tr.Untranslatable, fmt.Sprintf("managedFieldsManagers %s: %s", strings.Join(r.Managers, ", "), ReasonManagers))
	}
	if len(paths) == 0 {
		return tr
	}
	sel, err := compare.RegexTarget(r.Target, src.Syntax)
	if err != nil {
		tr.Untranslatable = append(tr.Untranslatable, err.Error())
		return tr
	}
	if src.Approximate != "" {
		tr.Lossy = append(tr.Lossy, src.Approximate)
	}
	tr.To = []model.Rule{{
		Engine: Engine, Type: RuleKustomizeIgnore,
		Target: sel, JSONPointers: paths, Scope: model.ScopeDiffAndApply,
	}}
	if r.Scope == model.ScopeDiff {
		tr.Notes = append(tr.Notes, "Flux also leaves ignored fields out of apply; Argo CD still syncs them unless syncOptions has RespectIgnoreDifferences=true")
	}
	return tr
}

func fluxDoc(g *compare.Group, form string) *yaml.Node {
	ns := DefaultNamespace
	ignore, left := compare.RuleEntries(g, func(r model.Rule) *yaml.Node {
		entry := compare.Mapping("paths", compare.StrSeq(r.JSONPointers))
		if tg := fluxTarget(r.Target); tg != nil {
			entry.Content = append(entry.Content, compare.Scalar("target"), tg)
		}
		return entry
	})
	// One document per holder: a HelmRelease's spec.driftDetection or a
	// Kustomization's spec.ignore, merged into the object that deploys the
	// same objects (every one of them for argocd-cm rules).
	apiVersion, kind, spec := "kustomize.toolkit.fluxcd.io/v1", "Kustomization", compare.Mapping("ignore", ignore)
	field, flux29 := "spec.ignore", " (Flux >= 2.9)"
	if form == FormHelmRelease {
		dd := compare.Mapping("mode", "enabled", "ignore", ignore)
		dd.Content[0].HeadComment = "drift detection must be enabled (or warn) for ignore rules to matter"
		apiVersion, kind, spec = "helm.toolkit.fluxcd.io/v2", "HelmRelease", compare.Mapping("driftDetection", dd)
		field, flux29 = "spec.driftDetection", ""
	}
	doc := compare.Mapping("apiVersion", apiVersion, "kind", kind,
		"metadata", compare.Mapping("name", g.Name, "namespace", ns), "spec", spec)
	what := "Merge " + field + " into the " + kind + " that deploys the same objects" + flux29 + "."
	if strings.HasPrefix(g.Source, "ConfigMap ") {
		what = "argocd-cm rules apply to every Application: merge " + field + " into every " + kind + flux29 + "."
	}
	doc.HeadComment = compare.DocHeader(g, what)
	if len(ignore.Content) == 0 {
		// An empty list would still be valid YAML; say why it is empty.
		doc.Content[len(doc.Content)-1].HeadComment = "nothing here could be translated"
	}
	return compare.Document(doc, left)
}

func fluxTarget(s model.Selector) *yaml.Node {
	n := compare.Mapping()
	for _, kv := range [][2]string{{"group", s.Group}, {"version", s.Version}, {"kind", s.Kind}, {"name", s.Name}, {"namespace", s.Namespace},
		{"labelSelector", s.LabelSelector}, {"annotationSelector", s.AnnotationSelector}} {
		if kv[1] != "" {
			n.Content = append(n.Content, compare.Scalar(kv[0]), compare.Scalar(kv[1]))
		}
	}
	if len(n.Content) == 0 {
		return nil
	}
	return n
}
