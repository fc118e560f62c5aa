// Package compare puts the ignore rules of Argo CD and Flux side by side in
// the common model: for every rule it finds the other engine's counterpart
// and says whether they are equivalent, one is narrower, or the rule cannot
// be said in the other engine at all (and why); it translates rules from one
// engine to the other; and, given concrete objects, it reports which fields
// of which objects each engine ignores. It is pure logic over model.Rule and
// unstructured objects: no cluster, no cobra, no adapter internals.
package compare

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Status classifies a rule against the other engine's rules.
type Status string

// Statuses.
const (
	// Equivalent: the other engine has rules selecting the same objects and
	// removing the same fields.
	Equivalent Status = "equivalent"
	// Partial: the other engine has related rules, but one side is
	// narrower or broader (objects or fields), or part of the rule has no
	// counterpart; Differences say which.
	Partial Status = "partial"
	// OnlyArgoCD and OnlyFlux: translatable, but the other engine has
	// nothing like it.
	OnlyArgoCD Status = "only-argocd"
	OnlyFlux   Status = "only-flux"
	// Untranslatable: the other engine cannot express the rule; Reasons
	// say why.
	Untranslatable Status = "untranslatable"
	// Invalid: the rule itself is broken (bad jq, pointer, glob, regex).
	Invalid Status = "invalid"
)

// Counterpart is one rule of the other engine related to a result's rule.
type Counterpart struct {
	Engine model.Engine `json:"engine"`
	Origin model.Origin `json:"origin"`
	// Targets: how this rule's objects relate to the counterpart's
	// (subset: this rule selects fewer objects).
	Targets Relation `json:"targets"`
	// Paths: how this rule's removed fields relate to the counterpart's.
	Paths Relation `json:"paths"`
	// Differences explain every difference in words, with examples.
	Differences []string `json:"differences,omitempty"`
}

// Result is the comparison of one rule.
type Result struct {
	Rule   model.Rule `json:"rule"`
	Status Status     `json:"status"`
	// Reasons explain an untranslatable, partial or invalid status, and
	// name the parts of a rule that have no counterpart.
	Reasons      []string      `json:"reasons,omitempty"`
	Counterparts []Counterpart `json:"counterparts,omitempty"`
	// PathsWithoutCounterpart are removed by this rule and by none of the
	// counterparts.
	PathsWithoutCounterpart []string `json:"pathsWithoutCounterpart,omitempty"`
	// Effect is what the rule removes from the given objects, if any.
	Effect *RuleEffect `json:"effect,omitempty"`
}

// Comparison is the document `compare -o json|yaml` prints.
type Comparison struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Summary    map[Status]int `json:"summary"`
	Results    []Result       `json:"results"`
	// Objects is the effect of both engines' rules on each given object.
	Objects []ObjectEffect `json:"objects,omitempty"`
	// Problems are inputs that could not be read and were skipped.
	Problems []string `json:"problems,omitempty"`
}

// analyzed is a rule prepared for comparison.
type analyzed struct {
	rule model.Rule
	// invalid is why the rule cannot be evaluated at all.
	invalid []string
	// intrinsic is set for mechanisms with no counterpart in the other
	// engine whatever their content.
	intrinsic string
	t         target
	// paths are the fields removed, as comparable patterns (pointers and
	// path-like jq, wildcards included).
	paths pathSet
	// translatable says whether some path can become a plain pointer.
	translatable bool
	// partsUntranslatable name parts of the rule the other engine cannot say.
	partsUntranslatable []string
	// targetUntranslatable names target parts the other engine cannot say.
	targetUntranslatable []string
	// jq analyses, index-aligned with rule.JQPathExpressions.
	jq []jqAnalysis
	// approximate says why the target could only be modelled approximately.
	approximate string
}

func engineName(e model.Engine) string {
	switch e {
	case model.EngineArgoCD:
		return "Argo CD"
	case model.EngineFlux:
		return "Flux"
	}
	return string(e)
}

func otherEngine(e model.Engine) model.Engine {
	if e == model.EngineArgoCD {
		return model.EngineFlux
	}
	return model.EngineArgoCD
}

// Reasons that recur; tests match on their prefixes.
const (
	ReasonManagers = "managedFieldsManagers has no Flux equivalent: Flux field ownership already does this " +
		"(server-side apply leaves fields owned only by other managers alone unless Flux owns them too)"
	ReasonExclusion = "resource.exclusions hides resources from Argo CD's discovery; Flux has no discovery exclusion " +
		"(the nearest is the kustomize.toolkit.fluxcd.io/reconcile: disabled annotation on each object)"
	ReasonLabels = "Argo CD ignoreDifferences cannot select objects by labels or annotations"
)

func analyze(r model.Rule) *analyzed {
	a := &analyzed{rule: r}
	if r.Error != "" {
		a.invalid = append(a.invalid, r.Error)
	}
	t, err := targetOf(r.Target, r.Engine)
	switch {
	case errors.Is(err, errUndecidable):
		a.approximate = err.Error()
	case err != nil:
		a.invalid = append(a.invalid, err.Error())
	}
	a.t = t
	if a.intrinsic = intrinsicReason(r); a.intrinsic != "" {
		return a
	}
	other := engineName(otherEngine(r.Engine))
	for _, p := range r.JSONPointers {
		pp, err := parsePointer(p)
		if err != nil {
			a.invalid = append(a.invalid, err.Error())
			continue
		}
		if len(pp) == 0 && r.Engine == model.EngineFlux {
			a.partsUntranslatable = append(a.partsUntranslatable,
				`path "" ignores the whole object (fluxcd/pkg ssa/jsondiff IgnorePathRoot); Argo CD ignoreDifferences has no whole-object form`)
		} else {
			a.translatable = true
		}
		a.paths = append(a.paths, pp)
	}
	if r.WholeResource && len(r.JSONPointers) == 0 {
		a.paths = append(a.paths, pathPattern{})
		a.partsUntranslatable = append(a.partsUntranslatable, "the rule covers the whole object; "+other+" has no whole-object ignore")
	}
	for _, e := range r.JQPathExpressions {
		j := analyzeJQ(e)
		a.jq = append(a.jq, j)
		switch j.Kind {
		case jqPath:
			a.paths = append(a.paths, j.Pattern)
			a.translatable = true
		case jqIterate:
			a.paths = append(a.paths, j.Pattern)
			a.partsUntranslatable = append(a.partsUntranslatable, fmt.Sprintf("jq %s %s", e, j.Reason))
		case jqInvalid:
			a.invalid = append(a.invalid, fmt.Sprintf("jq %s: %s", e, j.Reason))
		default:
			a.partsUntranslatable = append(a.partsUntranslatable, fmt.Sprintf("jq %s %s", e, j.Reason))
		}
	}
	if len(r.Managers) > 0 {
		a.partsUntranslatable = append(a.partsUntranslatable,
			fmt.Sprintf("managedFieldsManagers %s: %s", strings.Join(r.Managers, ", "), ReasonManagers))
	}
	if r.Engine == model.EngineFlux {
		if r.Target.LabelSelector != "" {
			a.targetUntranslatable = append(a.targetUntranslatable, fmt.Sprintf("target.labelSelector %q: %s", r.Target.LabelSelector, ReasonLabels))
		}
		if r.Target.AnnotationSelector != "" {
			a.targetUntranslatable = append(a.targetUntranslatable, fmt.Sprintf("target.annotationSelector %q: %s", r.Target.AnnotationSelector, ReasonLabels))
		}
		if len(a.invalid) == 0 {
			_, why := fluxTargetToArgo(r.Target)
			a.targetUntranslatable = append(a.targetUntranslatable, why...)
		}
	}
	return a
}

// intrinsicReason names mechanisms that have no counterpart whatever their
// content.
func intrinsicReason(r model.Rule) string {
	if r.Scope == model.ScopeRefresh {
		return "only suppresses Argo CD's refresh on resource updates (ignoreResourceUpdates); it is not a drift rule and Flux has no counterpart"
	}
	switch r.Type {
	case model.RuleArgoResourceExclusion:
		return ReasonExclusion
	case model.RuleArgoKnownTypeFields:
		return "knownTypeFields makes Argo CD compare CRD fields as built-in types (100m equals 0.1); Flux compares the server-side dry-run result and has no per-type normalization setting"
	case model.RuleArgoIgnoreExtraneous:
		return "IgnoreExtraneous only concerns live objects that are not in Git; Flux prunes or leaves such objects and never reports them as drift"
	case model.RuleArgoCompareOptions:
		return "resource.compareoptions is a controller-wide Argo CD diff setting (ignoreResourceStatusField removes /status before every diff); Flux has no such setting, and server-side apply does not write the status of kinds with a status subresource"
	case model.RuleFluxSSAAnnotation:
		return fmt.Sprintf("kustomize.toolkit.fluxcd.io/ssa: %s changes how Flux applies this object; Argo CD has no per-object apply mode that hides drift", r.Value)
	case model.RuleFluxReconcileDisabled:
		return "kustomize.toolkit.fluxcd.io/reconcile: disabled stops Flux from applying the object; Argo CD has no per-object switch (remove it from the Application instead)"
	case model.RuleFluxDriftDisabled:
		return "helm.toolkit.fluxcd.io/driftDetection: disabled turns drift detection off for one object; Argo CD has no per-object switch"
	}
	if r.Scope == model.ScopeDiscovery {
		return "hides the resource from discovery; the other engine has no discovery exclusion"
	}
	return ""
}

// Options tune Compare.
type Options struct {
	// Owners returns the engine objects (Application, Kustomization,
	// HelmRelease) that reconcile obj, from its tracking annotation or
	// ownership labels (the adapters' Owner). With it, a rule written in an
	// Application, Kustomization or HelmRelease only takes effect on the
	// objects that one reconciles, as in the engines; objects with no owner
	// of the rule's engine (plain manifests from Git) are assumed to be its.
	Owners func(obj *unstructured.Unstructured) []model.Owner
}

// Compare classifies every rule of both engines against the other engine's
// rules. objs, when not empty, also get compared by effect.
func Compare(rules []model.Rule, objs []*unstructured.Unstructured, o Options) *Comparison {
	var all []*analyzed
	for _, r := range rules {
		all = append(all, analyze(r))
	}
	var ev *evaluator
	if objs = uniqueObjects(objs); len(objs) > 0 {
		ev = newEvaluator(objs)
		ev.owners = o.Owners
	}
	c := &Comparison{APIVersion: model.APIVersion, Kind: "RuleComparison", Summary: map[Status]int{}, Results: []Result{}}
	rc := newRelCache()
	for _, a := range all {
		res := classify(a, all, rc)
		if ev != nil {
			res.Effect = ev.ruleEffect(a, res.Counterparts, all)
		}
		c.Results = append(c.Results, res)
		c.Summary[res.Status]++
	}
	SortResults(c.Results)
	if ev != nil {
		c.Objects = ev.objectEffects(all)
	}
	return c
}

func classify(a *analyzed, all []*analyzed, rc *relCache) Result {
	res := Result{Rule: a.rule}
	this, otherE := a.rule.Engine, otherEngine(a.rule.Engine)
	if len(a.invalid) > 0 {
		res.Status = Invalid
		res.Reasons = a.invalid
		return res
	}
	if a.intrinsic != "" {
		res.Status = Untranslatable
		res.Reasons = []string{a.intrinsic}
		return res
	}
	res.Reasons = append(append(res.Reasons, a.targetUntranslatable...), a.partsUntranslatable...)
	if a.approximate != "" {
		res.Reasons = append(res.Reasons, a.approximate)
	}
	var cands []*analyzed
	var rels []targetRel
	for _, o := range all {
		if o.rule.Engine != otherE || len(o.invalid) > 0 || o.intrinsic != "" || len(o.paths) == 0 {
			continue
		}
		if !a.paths.overlaps(o.paths) {
			continue
		}
		tr, err := rc.relateTargets(a.t, o.t)
		if err != nil || tr.Rel == RelDisjoint {
			continue
		}
		cands = append(cands, o)
		rels = append(rels, tr)
	}
	fully := !a.translatable || len(a.targetUntranslatable) > 0
	if len(cands) == 0 {
		switch {
		case fully:
			res.Status = Untranslatable
		case this == model.EngineArgoCD:
			res.Status = OnlyArgoCD
		default:
			res.Status = OnlyFlux
		}
		return res
	}
	thisName, otherName := engineName(this)+" rule", engineName(otherE)+" rule"
	var union pathSet
	// Equal-target counterparts by Argo CD instance: each argocd-cm (or
	// ArgoCD resource, chart values) is its own Argo CD, so two
	// instances' rules never add up to one equivalent; Application rules
	// (instance "") go with every instance.
	eqUnion := map[string]pathSet{}
	haveEq := false
	for i, o := range cands {
		cp := Counterpart{Engine: o.rule.Engine, Origin: o.rule.Origin, Targets: rels[i].Rel, Paths: relatePaths(a.paths, o.paths)}
		cp.Differences = rels[i].describe(thisName, otherName)
		if only := o.paths.uncovered(a.paths); len(only) > 0 {
			cp.Differences = append(cp.Differences, fmt.Sprintf("only the %s removes %s", thisName, strings.Join(only.strings(), ", ")))
		}
		if only := a.paths.uncovered(o.paths); len(only) > 0 {
			cp.Differences = append(cp.Differences, fmt.Sprintf("only the %s removes %s", otherName, strings.Join(only.strings(), ", ")))
		}
		res.Counterparts = append(res.Counterparts, cp)
		union = append(union, o.paths...)
		if rels[i].Rel == RelEqual {
			haveEq = true
			k := argoInstance(o.rule)
			eqUnion[k] = append(eqUnion[k], o.paths...)
		}
	}
	res.PathsWithoutCounterpart = union.uncovered(a.paths).strings()
	equal := false
	for k, ps := range eqUnion {
		if k != "" {
			ps = append(append(pathSet(nil), ps...), eqUnion[""]...)
		}
		if relatePaths(a.paths, ps) == RelEqual {
			equal = true
		}
	}
	if haveEq && !fully && len(a.partsUntranslatable) == 0 && equal {
		// Counterparts with different targets may still overlap; they do
		// not spoil equivalence, but they are listed.
		res.Status = Equivalent
		return res
	}
	res.Status = Partial
	return res
}

// argoInstance names the Argo CD instance of an argocd-cm rule (its file
// and holder), "" for other rules.
func argoInstance(r model.Rule) string {
	if r.Engine != model.EngineArgoCD {
		return ""
	}
	kind, _, _ := strings.Cut(r.Origin.Object, " ")
	if kind == "ConfigMap" || kind == "ArgoCD" || strings.Contains(r.Origin.Field, "configs.cm[") {
		return r.Origin.File + "|" + r.Origin.Object
	}
	return ""
}

// SortResults orders results by engine, then origin (file, line, object,
// field), so output is the same on every run.
func SortResults(rs []Result) {
	sort.SliceStable(rs, func(i, j int) bool {
		return model.CompareRules(rs[i].Rule, rs[j].Rule) < 0
	})
	for i := range rs {
		cs := rs[i].Counterparts
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].Origin.Compare(cs[b].Origin) < 0 })
	}
}
