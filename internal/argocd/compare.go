package argocd

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/compare"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// The forms of `compare --to argocd`.
const (
	FormApplication = "Application"
	FormConfigMap   = "argocd-cm"
)

// Reasons that recur; tests match on their prefixes.
const (
	ReasonExclusion = "resource.exclusions hides resources from Argo CD's discovery; Flux has no discovery exclusion " +
		"(the nearest is the kustomize.toolkit.fluxcd.io/reconcile: disabled annotation on each object)"
	ReasonLabels = "Argo CD ignoreDifferences cannot select objects by labels or annotations"
)

// maxNames bounds how many exact Argo CD rules a name regex may expand to.
const maxNames = 16

// CompareSemantics is what `compare` needs to know about Argo CD's rules:
// which have no counterpart anywhere, what ignoreDifferences cannot say of
// another engine's rule, the instance an argocd-cm rule belongs to, and
// the translation of other rules to ignoreDifferences.
func CompareSemantics() *compare.Semantics {
	return &compare.Semantics{
		Syntax:    model.MatchGlob,
		Intrinsic: intrinsic,
		CannotSay: cannotSay,
		Instance:  instance,
		Scoped: func(r model.Rule) bool {
			kind, _, _ := strings.Cut(r.Origin.Object, " ")
			return kind == "Application" && !strings.Contains(r.Origin.Field, "configs.cm[")
		},
		Translator: &compare.Translator{
			Forms:     []string{FormApplication, FormConfigMap},
			Translate: translate,
			Render:    renderTranslations,
		},
	}
}

// intrinsic names Argo CD mechanisms that have no counterpart whatever
// their content.
func intrinsic(r model.Rule) string {
	if r.Scope == model.ScopeRefresh {
		return "only suppresses Argo CD's refresh on resource updates (ignoreResourceUpdates); it is not a drift rule and Flux has no counterpart"
	}
	switch r.Type {
	case RuleResourceExclusion:
		return ReasonExclusion
	case RuleKnownTypeFields:
		return "knownTypeFields makes Argo CD compare CRD fields as built-in types (100m equals 0.1); Flux compares the server-side dry-run result and has no per-type normalization setting"
	case RuleIgnoreExtraneous:
		return "IgnoreExtraneous only concerns live objects that are not in Git; Flux prunes or leaves such objects and never reports them as drift"
	case RuleCompareOptions:
		return "resource.compareoptions is a controller-wide Argo CD diff setting (ignoreResourceStatusField removes /status before every diff); Flux has no such setting, and server-side apply does not write the status of kinds with a status subresource"
	}
	return ""
}

// cannotSay names what ignoreDifferences cannot say of another engine's
// rule: label and annotation selectors, regexes no glob or short name list
// says, the whole object.
func cannotSay(r model.Rule) compare.Limits {
	l := compare.Limits{Target: selectorReasons(r.Target)}
	if r.Target.Syntax != model.MatchGlob {
		l.Target = append(l.Target, globTarget(r.Target).Untranslatable...)
	}
	for _, p := range r.JSONPointers {
		if p == "" {
			l.Parts = append(l.Parts, rootPath)
			continue
		}
		l.Some = true
	}
	if r.WholeResource && len(r.JSONPointers) == 0 {
		l.Parts = append(l.Parts, "the rule covers the whole object; Argo CD has no whole-object ignore")
	}
	for _, e := range r.JQPathExpressions {
		if compare.JQKindOf(e) != compare.JQInvalid {
			l.Some = true
		}
	}
	return l
}

// selectorReasons: ignoreDifferences has no label or annotation selector.
func selectorReasons(s model.Selector) []string {
	var out []string
	if s.LabelSelector != "" {
		out = append(out, fmt.Sprintf("target.labelSelector %q: %s", s.LabelSelector, ReasonLabels))
	}
	if s.AnnotationSelector != "" {
		out = append(out, fmt.Sprintf("target.annotationSelector %q: %s", s.AnnotationSelector, ReasonLabels))
	}
	return out
}

// rootPath: a path "" ignores the whole object.
const rootPath = `path "" ignores the whole object (fluxcd/pkg ssa/jsondiff IgnorePathRoot); Argo CD ignoreDifferences has no whole-object form`

func globTarget(s model.Selector) compare.GlobTargets {
	return compare.GlobTarget(s, model.MatchRegex, maxNames, "Argo CD", "Argo CD ignoreDifferences")
}

// instance names the Argo CD instance of an argocd-cm rule (its file and
// holder), "" for other rules (an Application's go with every instance).
func instance(r model.Rule) string {
	kind, _, _ := strings.Cut(r.Origin.Object, " ")
	if kind == "ConfigMap" || kind == "ArgoCD" || strings.Contains(r.Origin.Field, "configs.cm[") {
		return r.Origin.File + "|" + r.Origin.Object
	}
	return ""
}

// translate says another engine's rule as ignoreDifferences.
func translate(src compare.Source) compare.Translation {
	tr := compare.Translation{From: src.Rule}
	r := src.Rule
	var ptrs []string
	for _, p := range r.JSONPointers {
		if p == "" {
			tr.Untranslatable = append(tr.Untranslatable, rootPath)
			continue
		}
		ptrs = append(ptrs, p)
	}
	t := r.Target
	if t.Syntax == "" {
		t.Syntax = src.Syntax
	}
	var at compare.GlobTargets
	if t.Syntax == model.MatchGlob {
		at.Selectors = []model.Selector{t}
	} else {
		at = globTarget(t)
	}
	tr.Lossy = append(tr.Lossy, at.Lossy...)
	tr.Untranslatable = append(tr.Untranslatable, at.Untranslatable...)
	tr.Untranslatable = append(tr.Untranslatable, selectorReasons(r.Target)...)
	if len(ptrs) == 0 || len(tr.Untranslatable) > 0 && (len(at.Selectors) == 0 || r.Target.LabelSelector != "" || r.Target.AnnotationSelector != "") {
		// A rule for other objects than the ones meant is worse than none.
		return tr
	}
	for _, sel := range at.Selectors {
		tr.To = append(tr.To, model.Rule{
			Engine: Engine, Type: RuleIgnoreDifferences,
			Target: sel, JSONPointers: ptrs, Scope: model.ScopeDiff,
		})
	}
	tr.Notes = append(tr.Notes, "Argo CD still syncs ignored fields unless the Application sets syncOptions RespectIgnoreDifferences=true; Flux leaves them out of apply")
	return tr
}

// renderTranslations writes Application ignoreDifferences (one document per
// source object) or one argocd-cm.
func renderTranslations(trs []compare.Translation, form string) ([]byte, error) {
	groups := compare.Groups(trs)
	if form == FormConfigMap && len(groups) > 1 {
		// There is one argocd-cm: merge every source into it.
		all := &compare.Group{Source: "every rule source (see the comment on each key)", Name: "argocd-cm"}
		for _, g := range groups {
			all.Items = append(all.Items, g.Items...)
		}
		groups = []*compare.Group{all}
	}
	var docs []*yaml.Node
	for _, g := range groups {
		if form == FormConfigMap {
			doc, err := argoCMDoc(g)
			if err != nil {
				return nil, err
			}
			docs = append(docs, doc)
			continue
		}
		docs = append(docs, argoAppDoc(g))
	}
	return compare.Encode(docs)
}

func argoAppDoc(g *compare.Group) *yaml.Node {
	ns := "argocd"
	list, left := compare.RuleEntries(g, func(r model.Rule) *yaml.Node {
		e := compare.Mapping()
		if r.Target.Group != "" {
			e.Content = append(e.Content, compare.Scalar("group"), compare.Scalar(r.Target.Group))
		}
		e.Content = append(e.Content, compare.Scalar("kind"), compare.Scalar(r.Target.Kind))
		if r.Target.Name != "" {
			e.Content = append(e.Content, compare.Scalar("name"), compare.Scalar(r.Target.Name))
		}
		if r.Target.Namespace != "" {
			e.Content = append(e.Content, compare.Scalar("namespace"), compare.Scalar(r.Target.Namespace))
		}
		e.Content = append(e.Content, compare.Scalar("jsonPointers"), compare.StrSeq(r.JSONPointers))
		return e
	})
	doc := compare.Mapping("apiVersion", "argoproj.io/v1alpha1", "kind", "Application",
		"metadata", compare.Mapping("name", g.Name, "namespace", ns),
		"spec", compare.Mapping("ignoreDifferences", list))
	doc.HeadComment = compare.DocHeader(g, "Merge spec.ignoreDifferences into the Application that deploys the same objects.")
	return compare.Document(doc, left)
}

// argoCMDoc writes argocd-cm keys resource.customizations.ignoreDifferences.<group_kind>
// (argo-cd util/settings/settings.go: the key suffix is split on "_" by
// convertToOverrideKey; a bare kind is the core group; "all" is */*).
// ConfigMap keys admit no glob characters and carry no name or namespace,
// so only literal group/kind targets without names fit.
func argoCMDoc(g *compare.Group) (*yaml.Node, error) {
	ns := "argocd"
	type entry struct {
		ptrs     []string
		comments []string
	}
	keys := map[string]*entry{}
	var left []string
	for _, t := range g.Items {
		if len(t.To) == 0 {
			left = append(left, compare.Comments(t))
			continue
		}
		reported := false
		for _, r := range t.To {
			key, why := cmKey(r.Target)
			if why != "" {
				if !reported {
					tt := t
					tt.Untranslatable = append(append([]string(nil), t.Untranslatable...), "not expressible as an argocd-cm key: "+why+" (use --form Application)")
					left = append(left, compare.Comments(tt))
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
			e.comments = append(e.comments, compare.Comments(tt))
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	data := compare.Mapping()
	for _, k := range names {
		e := keys[k]
		var vb bytes.Buffer
		venc := yaml.NewEncoder(&vb)
		venc.SetIndent(2)
		if err := venc.Encode(map[string][]string{"jsonPointers": compare.Dedupe(e.ptrs)}); err != nil {
			return nil, err
		}
		v := vb.Bytes()
		kn := compare.Scalar("resource.customizations.ignoreDifferences." + k)
		kn.HeadComment = strings.Join(e.comments, "\n")
		vn := compare.Scalar(string(v))
		vn.Style = yaml.LiteralStyle
		data.Content = append(data.Content, kn, vn)
	}
	doc := compare.Mapping("apiVersion", "v1", "kind", "ConfigMap",
		"metadata", compare.Mapping("name", "argocd-cm", "namespace", ns),
		"data", data)
	doc.HeadComment = compare.DocHeader(g, "Merge data into argocd-cm; these keys apply to every Application.")
	return compare.Document(doc, left), nil
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
