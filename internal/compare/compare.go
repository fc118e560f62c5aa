// Package compare puts the ignore rules of every registered engine side by
// side in the common model: for every rule it finds the other engines'
// counterparts and says whether they are equivalent, one is narrower, or
// the rule cannot be said in another engine at all (and why); it
// translates rules to an engine through that engine's Translator; and,
// given concrete objects, it reports which fields of which objects each
// engine ignores. It is pure logic over model.Rule and unstructured
// objects: no cluster, no cobra, no adapter internals, and no engine by
// name (each engine describes its rules with a Semantics).
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
	// Only(engine) ("only-argocd"): translatable, but no other engine has
	// anything like it.

	// Untranslatable: no other engine can express the rule; Reasons say
	// why.
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
	// intrinsic is set for mechanisms with no counterpart in any other
	// engine whatever their content.
	intrinsic string
	t         target
	// paths are the fields removed, as comparable patterns (pointers and
	// path-like jq, wildcards included).
	paths pathSet
	// limits say, per other engine, what it cannot say of the rule.
	limits map[model.Engine]Limits
	// others are the other engines, in order.
	others []model.Engine
	// jq analyses, index-aligned with rule.JQPathExpressions.
	jq []jqAnalysis
	// approximate says why the target could only be modelled approximately.
	approximate string
}

// fully says no other engine can say the rule (none at all: it is only
// its engine's).
func (a *analyzed) fully() bool {
	if len(a.others) == 0 {
		return false
	}
	for _, e := range a.others {
		if !a.limits[e].full() {
			return false
		}
	}
	return true
}

// reasons lists what the other engines cannot say of the rule, targets
// first, each reason once.
func (a *analyzed) reasons() []string {
	var out []string
	seen := map[string]bool{}
	add := func(ss []string) {
		for _, s := range ss {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	for _, e := range a.others {
		add(a.limits[e].Target)
	}
	for _, e := range a.others {
		add(a.limits[e].Parts)
	}
	return out
}

func analyze(r model.Rule, es Engines) *analyzed {
	a := &analyzed{rule: r}
	if r.Error != "" {
		a.invalid = append(a.invalid, r.Error)
	}
	self := es.of(r.Engine)
	t, err := targetOf(r.Target, self.syntax())
	switch {
	case errors.Is(err, errUndecidable):
		a.approximate = err.Error()
	case err != nil:
		a.invalid = append(a.invalid, err.Error())
	}
	a.t = t
	if self.Intrinsic != nil {
		a.intrinsic = self.Intrinsic(r)
	}
	if a.intrinsic == "" && r.Scope == model.ScopeDiscovery {
		a.intrinsic = "hides the resource from discovery; the other engine has no discovery exclusion"
	}
	if a.intrinsic != "" {
		return a
	}
	for _, p := range r.JSONPointers {
		pp, err := parsePointer(p)
		if err != nil {
			a.invalid = append(a.invalid, err.Error())
			continue
		}
		a.paths = append(a.paths, pp)
	}
	if r.WholeResource && len(r.JSONPointers) == 0 {
		a.paths = append(a.paths, pathPattern{})
	}
	for _, e := range r.JQPathExpressions {
		j := analyzeJQ(e)
		a.jq = append(a.jq, j)
		switch j.Kind {
		case JQPath, JQIterate:
			a.paths = append(a.paths, j.Pattern)
		case JQInvalid:
			a.invalid = append(a.invalid, fmt.Sprintf("jq %s: %s", e, j.Reason))
		}
	}
	if len(a.invalid) > 0 {
		return a
	}
	a.limits = map[model.Engine]Limits{}
	for _, o := range es {
		if o.Engine == r.Engine {
			continue
		}
		a.others = append(a.others, o.Engine)
		l := Limits{Some: true}
		if o.CannotSay != nil {
			rr := r
			if rr.Target.Syntax == "" {
				rr.Target.Syntax = self.syntax()
			}
			l = o.CannotSay(rr)
		}
		a.limits[o.Engine] = l
	}
	return a
}

// Options tune Compare.
type Options struct {
	// Engines are the semantics of the engines taking part (every
	// registered one): the rules of each are compared with the rules of
	// every other.
	Engines Engines
	// Owners returns the engine objects (Application, Kustomization,
	// HelmRelease) that reconcile obj, from its tracking annotation or
	// ownership labels (the adapters' Owner). With it, a rule written in an
	// owner object (Semantics.Scoped) only takes effect on the objects that
	// one reconciles, as in the engines; objects with no owner of the
	// rule's engine (plain manifests from Git) are assumed to be its.
	Owners func(obj *unstructured.Unstructured) []model.Owner
}

// Compare classifies every rule against the other engines' rules. objs,
// when not empty, also get compared by effect.
func Compare(rules []model.Rule, objs []*unstructured.Unstructured, o Options) *Comparison {
	var all []*analyzed
	for _, r := range rules {
		all = append(all, analyze(r, o.Engines))
	}
	var ev *evaluator
	if objs = uniqueObjects(objs); len(objs) > 0 {
		ev = newEvaluator(objs, o.Engines)
		ev.owners = o.Owners
	}
	c := &Comparison{APIVersion: model.APIVersion, Kind: "RuleComparison", Summary: map[Status]int{}, Results: []Result{}}
	rc := newRelCache()
	for _, a := range all {
		res := classify(a, all, rc, o.Engines)
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

func classify(a *analyzed, all []*analyzed, rc *relCache, es Engines) Result {
	res := Result{Rule: a.rule}
	this := a.rule.Engine
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
	res.Reasons = a.reasons()
	if a.approximate != "" {
		res.Reasons = append(res.Reasons, a.approximate)
	}
	var cands []*analyzed
	var rels []targetRel
	for _, o := range all {
		if sameSide(a.rule, o.rule) || len(o.invalid) > 0 || o.intrinsic != "" || len(o.paths) == 0 {
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
	if len(cands) == 0 {
		switch {
		case a.fully():
			res.Status = Untranslatable
		case a.rule.Origin.Context != "":
			res.Status = Status(string(Only(this)) + "@" + a.rule.Origin.Context)
		default:
			res.Status = Only(this)
		}
		return res
	}
	thisName := es.title(this) + " rule"
	var union pathSet
	// Equal-target counterparts by engine, cluster and instance: each
	// argocd-cm (or ArgoCD resource, chart values) is its own Argo CD, so
	// two instances' rules never add up to one equivalent; rules of no
	// instance (an Application's) go with every instance of their cluster.
	type key struct {
		engine            model.Engine
		context, instance string
	}
	eqUnion := map[key]pathSet{}
	for i, o := range cands {
		otherName := es.title(o.rule.Engine) + " rule"
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
			k := key{o.rule.Engine, o.rule.Origin.Context, instanceOf(es, o.rule)}
			eqUnion[k] = append(eqUnion[k], o.paths...)
		}
	}
	res.PathsWithoutCounterpart = union.uncovered(a.paths).strings()
	for k, ps := range eqUnion {
		if l := a.limitsFor(k.engine); l.full() || len(l.Parts) > 0 {
			continue
		}
		if k.instance != "" {
			ps = append(append(pathSet(nil), ps...), eqUnion[key{k.engine, k.context, ""}]...)
		}
		if relatePaths(a.paths, ps) == RelEqual {
			// Counterparts with different targets may still overlap; they
			// do not spoil equivalence, but they are listed.
			res.Status = Equivalent
			return res
		}
	}
	res.Status = Partial
	return res
}

// Removes reports whether rule r removes fields that can be evaluated on
// objects (a valid rule with paths or field managers, not a mechanism
// with no field effect): the rules --effect lists the kinds of.
func Removes(r model.Rule, es Engines) bool {
	a := analyze(r, es)
	return len(a.invalid) == 0 && a.intrinsic == "" && (len(a.paths) > 0 || len(r.Managers) > 0)
}

// sameSide reports rules of one engine read from one place: they are not
// compared with each other. Rules of one engine read from two clusters
// (compare --contexts) are two sides, like two engines.
func sameSide(a, b model.Rule) bool {
	return a.Engine == b.Engine && a.Origin.Context == b.Origin.Context
}

// limitsFor is what engine e cannot say of the rule: nothing when it is
// the rule's own engine (another cluster's instance of it).
func (a *analyzed) limitsFor(e model.Engine) Limits {
	if e == a.rule.Engine {
		return Limits{Some: true}
	}
	return a.limits[e]
}

// instanceOf names the engine instance of rule r (Semantics.Instance).
func instanceOf(es Engines, r model.Rule) string {
	if f := es.of(r.Engine).Instance; f != nil {
		return f(r)
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
