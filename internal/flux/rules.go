package flux

import (
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// API groups of the two controllers (kustomize-controller api/v1 and
// helm-controller api/v2 GroupVersion; a test pins them to upstream's).
const (
	kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	helmGroup      = "helm.toolkit.fluxcd.io"
)

// Object marks (labels or annotations) that change how Flux treats one
// object. Flux reads them from labels and annotations alike and compares
// values case-insensitively (fluxcd/pkg ssa utils/meta.go AnyInMetadata).
const (
	// SSAKey: Override (default), Merge, IfNotPresent, Ignore.
	SSAKey = kustomizeGroup + "/ssa"
	// ReconcileKey: disabled means neither applied nor pruned.
	ReconcileKey = kustomizeGroup + "/reconcile"
	// PruneKey: disabled keeps the object when it leaves the manifest.
	PruneKey = kustomizeGroup + "/prune"
	// ForceKey: enabled recreates the object on immutable-field errors.
	ForceKey = kustomizeGroup + "/force"
	// DriftDetectionKey: disabled excludes the object from HelmRelease
	// drift detection (helm-controller api/v2 DriftDetectionMetadataKey).
	DriftDetectionKey = helmGroup + "/driftDetection"
)

// Ownership labels set by the controllers on every object they apply
// (fluxcd/pkg ssa manager.go GetOwnerLabels, Owner.Group + "/name").
const (
	KustomizeNameLabel      = kustomizeGroup + "/name"
	KustomizeNamespaceLabel = kustomizeGroup + "/namespace"
	HelmNameLabel           = helmGroup + "/name"
	HelmNamespaceLabel      = helmGroup + "/namespace"
)

// GVKs of the Flux objects read by the adapter (read-only).
var (
	KustomizationGVK = kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind)
	HelmReleaseGVK   = helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind)
)

// positioner returns the file position of a JSON pointer inside the
// document a rule was read from (source.Document.Position).
type positioner func(pointer string) (line, col int)

// doc is what the rule reader needs of a source.Document.
type doc struct {
	obj  *unstructured.Unstructured
	file string
	pos  positioner
}

// origin builds a rule origin: the holding object and field path always,
// the file position when the rule came from a file.
func (d doc) origin(field, pointer string) model.Origin {
	o := model.Origin{Object: objectRef(d.obj), Field: field}
	if d.file != "" {
		o.File = d.file
		if d.pos != nil {
			o.Line, o.Column = d.pos(pointer)
		}
	}
	return o
}

func objectRef(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}

// ignoreRule is one Kustomization .spec.ignore[i] or HelmRelease
// .spec.driftDetection.ignore[i], compiled with Flux's own selector code.
type ignoreRule struct {
	rule   model.Rule
	paths  []string
	target *jsondiff.Selector
	// sr is nil for a rule without target: it matches every object.
	sr *jsondiff.SelectorRegex
	// err: the selector does not compile (invalid regex or selector).
	err error
	// pathErrs: index into paths -> why the pointer is invalid.
	pathErrs map[int]error
}

func (r *ignoreRule) origin() *model.Origin { o := r.rule.Origin; return &o }

// compileIgnoreRule compiles one rule; errors stay inside the rule so the
// others are still evaluated.
func compileIgnoreRule(typ model.RuleType, scope model.Scope, paths []string, target *kustomize.Selector, origin model.Origin) ignoreRule {
	r := ignoreRule{paths: append([]string(nil), paths...)}
	r.rule = model.Rule{
		Engine:       Engine,
		Type:         typ,
		Origin:       origin,
		Target:       model.Selector{Syntax: model.MatchRegex},
		JSONPointers: r.paths,
		Scope:        scope,
	}
	if target != nil {
		r.target = &jsondiff.Selector{
			Group:              target.Group,
			Version:            target.Version,
			Kind:               target.Kind,
			Name:               target.Name,
			Namespace:          target.Namespace,
			AnnotationSelector: target.AnnotationSelector,
			LabelSelector:      target.LabelSelector,
		}
		r.rule.Target = model.Selector{
			Group: target.Group, Version: target.Version, Kind: target.Kind,
			Name: target.Name, Namespace: target.Namespace, Syntax: model.MatchRegex,
			LabelSelector: target.LabelSelector, AnnotationSelector: target.AnnotationSelector,
		}
		// The very function kustomize-controller and helm-controller use
		// (through jsondiff.CompileIgnoreRules).
		r.sr, r.err = jsondiff.NewSelectorRegex(r.target)
	}
	var msgs []string
	if r.err != nil {
		msgs = append(msgs, r.err.Error())
	}
	for i, p := range r.paths {
		var err error
		switch {
		case p == jsondiff.IgnorePathRoot && typ == RuleHelmIgnore:
			// jsondiff.Unstructured short-circuits IgnorePathRoot: the
			// whole object is excluded from helm-controller's diff.
			r.rule.WholeResource = true
		case p == jsondiff.IgnorePathRoot:
			// kustomize-controller strips paths with a json-patch remove
			// (ssa manager_apply.go removeIgnoredFields), which treats ""
			// as a no-op: the rule silently ignores nothing.
			err = fmt.Errorf("path \"\" removes nothing in kustomize-controller (only HelmRelease drift detection reads \"\" as the whole object)")
		default:
			err = validatePointer(p)
		}
		if err != nil {
			if r.pathErrs == nil {
				r.pathErrs = map[int]error{}
			}
			r.pathErrs[i] = err
			msgs = append(msgs, err.Error())
		}
	}
	if len(paths) == 0 {
		msgs = append(msgs, "no paths: the rule removes nothing")
	}
	r.rule.Error = strings.Join(msgs, "; ")
	return r
}

// validatePointer checks RFC 6901 syntax: "" or "/"-prefixed tokens, "~"
// only as "~0" or "~1". Flux removes ignored paths with json-patch
// (ssa jsondiff/patch.go ApplyPatchToUnstructured, AllowMissingPathOnRemove),
// which silently does nothing for such a pointer, and fails the whole
// patch for a "-" token.
func validatePointer(p string) error {
	tokens, err := jsonpointer.Parse(p)
	if err != nil {
		return fmt.Errorf("%w (Flux silently removes nothing for it)", err)
	}
	for _, tok := range tokens {
		if tok == "-" {
			return fmt.Errorf("invalid JSON pointer %q: \"-\" names no list item (json-patch fails, so Flux fails on every object the rule matches)", p)
		}
	}
	return nil
}

// covers reports whether removing ignore path p removes the field at
// pointer (p is the field itself or one of its parents).
func covers(p, pointer string) bool {
	return p == jsondiff.IgnorePathRoot || p == pointer || strings.HasPrefix(pointer, p+"/")
}

// kustomizationRules reads .spec.ignore of a Kustomization.
func kustomizationRules(d doc, k *kustomizev1.Kustomization) []ignoreRule {
	var out []ignoreRule
	for i, ir := range k.Spec.Ignore {
		field := fmt.Sprintf(".spec.ignore[%d]", i)
		out = append(out, compileIgnoreRule(RuleKustomizeIgnore, model.ScopeDiffAndApply,
			ir.Paths, ir.Target, d.origin(field, fmt.Sprintf("/spec/ignore/%d", i))))
	}
	return out
}

// helmReleaseRules reads .spec.driftDetection.ignore of a HelmRelease. They
// only affect drift detection and correction: a Helm upgrade still writes
// the fields (engines.md 2b), hence ScopeDiff.
func helmReleaseRules(d doc, hr *helmv2.HelmRelease) []ignoreRule {
	if hr.Spec.DriftDetection == nil {
		return nil
	}
	var out []ignoreRule
	for i, ir := range hr.Spec.DriftDetection.Ignore {
		field := fmt.Sprintf(".spec.driftDetection.ignore[%d]", i)
		out = append(out, compileIgnoreRule(RuleHelmIgnore, model.ScopeDiff,
			ir.Paths, ir.Target, d.origin(field, fmt.Sprintf("/spec/driftDetection/ignore/%d", i))))
	}
	return out
}

// toKustomization converts an unstructured Kustomization to the typed API.
func toKustomization(obj *unstructured.Unstructured) (*kustomizev1.Kustomization, error) {
	k := &kustomizev1.Kustomization{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, k); err != nil {
		return nil, fmt.Errorf("%s: not a valid %s: %w", objectRef(obj), KustomizationGVK.GroupVersion(), err)
	}
	return k, nil
}

// toHelmRelease converts an unstructured HelmRelease to the typed API.
func toHelmRelease(obj *unstructured.Unstructured) (*helmv2.HelmRelease, error) {
	hr := &helmv2.HelmRelease{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, hr); err != nil {
		return nil, fmt.Errorf("%s: not a valid %s: %w", objectRef(obj), HelmReleaseGVK.GroupVersion(), err)
	}
	return hr, nil
}

func isKustomization(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == KustomizationGVK.Group && gvk.Kind == KustomizationGVK.Kind
}

func isHelmRelease(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == HelmReleaseGVK.Group && gvk.Kind == HelmReleaseGVK.Kind
}

// mark is one Flux label/annotation found on an object.
type mark struct {
	key, value string
	// where: "annotation" or "label".
	where  string
	origin model.Origin
}

// findMark looks key up in labels then annotations, as AnyInMetadata does.
// Empty values do not count there either.
func findMark(d doc, key string) *mark {
	if d.obj == nil {
		return nil
	}
	esc := jsonpointer.Escape(key)
	if v := d.obj.GetLabels()[key]; v != "" {
		return &mark{key: key, value: v, where: "label",
			origin: d.origin(fmt.Sprintf(".metadata.labels[%s]", key), "/metadata/labels/"+esc)}
	}
	if v := d.obj.GetAnnotations()[key]; v != "" {
		return &mark{key: key, value: v, where: "annotation",
			origin: d.origin(fmt.Sprintf(".metadata.annotations[%s]", key), "/metadata/annotations/"+esc)}
	}
	return nil
}

// SSA annotation values, compared case-insensitively like Flux does.
const (
	ssaOverride     = "Override"
	ssaMerge        = kustomizev1.MergeValue
	ssaIfNotPresent = kustomizev1.IfNotPresentValue
	ssaIgnore       = kustomizev1.IgnoreValue
)

// ssaMode returns the canonical spelling of an ssa value, and false for a
// value Flux does not know (then it behaves as Override: no selector of
// kustomize-controller matches it).
func ssaMode(v string) (string, bool) {
	for _, m := range []string{ssaOverride, ssaMerge, ssaIfNotPresent, ssaIgnore} {
		if strings.EqualFold(v, m) {
			return m, true
		}
	}
	return ssaOverride, false
}

// objectSelector is an exact selector for the object carrying a mark.
func objectSelector(obj *unstructured.Unstructured) model.Selector {
	gvk := obj.GroupVersionKind()
	return model.Selector{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Name: obj.GetName(), Namespace: obj.GetNamespace(), Syntax: model.MatchExact}
}

// markRules turns the Flux marks on one manifest into rules.
func markRules(d doc) []model.Rule {
	var out []model.Rule
	base := func(typ model.RuleType, m *mark, scope model.Scope) model.Rule {
		return model.Rule{Engine: Engine, Type: typ, Origin: m.origin,
			Target: objectSelector(d.obj), Scope: scope, Value: m.value}
	}
	if m := findMark(d, SSAKey); m != nil {
		r := base(RuleSSAAnnotation, m, model.ScopeApply)
		mode, known := ssaMode(m.value)
		switch {
		case !known:
			r.Error = fmt.Sprintf("unknown %s value %q (want Override, Merge, IfNotPresent or Ignore): Flux treats it as Override", SSAKey, m.value)
		case mode == ssaIgnore || mode == ssaIfNotPresent:
			r.WholeResource = true
		}
		out = append(out, r)
	}
	// The on/off marks: one value (any case) switches the mark on; any
	// other value is a rule with no effect.
	for _, mk := range []struct {
		key      string
		typ      model.RuleType
		scope    model.Scope
		disabled string
		effect   string
		whole    bool
	}{
		{ReconcileKey, RuleReconcileDisabled, model.ScopeApply, kustomizev1.DisabledValue, "disables reconciliation", true},
		{PruneKey, RulePruneDisabled, model.ScopeApply, kustomizev1.DisabledValue, "disables pruning", false},
		{DriftDetectionKey, RuleDriftDisabled, model.ScopeDiff, helmv2.DriftDetectionDisabledValue, "excludes the object", true},
	} {
		m := findMark(d, mk.key)
		if m == nil {
			continue
		}
		r := base(mk.typ, m, mk.scope)
		if strings.EqualFold(m.value, mk.disabled) {
			r.WholeResource = mk.whole
		} else {
			r.Error = fmt.Sprintf("%s value %q has no effect: only %q %s", mk.key, m.value, mk.disabled, mk.effect)
		}
		out = append(out, r)
	}
	return out
}

// rulesFromDocs is RulesFromDocuments over the internal doc view.
func rulesFromDocs(docs []doc) ([]model.Rule, []error) {
	var (
		rules []model.Rule
		errs  []error
	)
	addIgnore := func(irs []ignoreRule) {
		for _, ir := range irs {
			rules = append(rules, ir.rule)
			if ir.rule.Error != "" {
				errs = append(errs, fmt.Errorf("%s: %s", ir.rule.Origin.String(), ir.rule.Error))
			}
		}
	}
	patches := driftPatches(docs)
	for _, d := range docs {
		if d.obj == nil {
			continue
		}
		switch {
		case isKustomization(d.obj):
			k, err := toKustomization(d.obj)
			if err != nil {
				errs = append(errs, withFile(d, err))
				continue
			}
			addIgnore(kustomizationRules(d, k))
		case isHelmRelease(d.obj):
			hr, err := toHelmRelease(d.obj)
			if err != nil {
				errs = append(errs, withFile(d, err))
				continue
			}
			addIgnore(helmReleaseRules(d, hr))
			addIgnore(patchRules(d, patchesFor(d, patches)))
		}
		for _, r := range markRules(d) {
			rules = append(rules, r)
			if r.Error != "" {
				errs = append(errs, fmt.Errorf("%s: %s", r.Origin.String(), r.Error))
			}
		}
	}
	return rules, errs
}

func withFile(d doc, err error) error {
	if d.file == "" {
		return err
	}
	line := 0
	if d.pos != nil {
		line, _ = d.pos("")
	}
	if line > 0 {
		return fmt.Errorf("%s:%d: %w", d.file, line, err)
	}
	return fmt.Errorf("%s: %w", d.file, err)
}
