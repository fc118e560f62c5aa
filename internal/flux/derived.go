package flux

import (
	"sort"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/kube"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// serverDerived is a field the API server computes from another field of
// the same object, and drops when that field goes back to what does not
// need it: when kustomize-controller's apply reverts the source, the
// server removes the derived field in the same write.
type serverDerived struct {
	group, kind, source, derived, why string
	// creates says whether the server computes the derived field for the
	// object the apply sends (the normalized manifest), and why: then a
	// reverted source brings it in when the live object lacks it.
	creates func(desired map[string]any) string
}

// serverDerivedFields are the derivations of the built-in kinds (measured
// on kube-apiserver v1.37.2 under kustomize-controller v1.9.6: make
// differential seeds 7235 and 9177).
var serverDerivedFields = []serverDerived{
	{kind: "Service", source: "/spec/sessionAffinity", derived: "/spec/sessionAffinityConfig",
		// kubernetes pkg/apis/core/v1/defaults.go SetDefaults_Service
		// fills it for ClientIP, in the writer's request (so the writer
		// owns it, and kustomize-controller's managedFields cleanup hands
		// it over with the source); measured gone after the apply.
		why: "the API server filled sessionAffinityConfig when sessionAffinity became ClientIP, in the same write; the apply that sets sessionAffinity back removes it",
		creates: func(d map[string]any) string {
			if v, _, _ := unstructured.NestedString(d, "spec", "sessionAffinity"); v == "ClientIP" {
				return "the apply sets sessionAffinity ClientIP and the API server fills sessionAffinityConfig in the same write"
			}
			return ""
		}},
	{kind: "Service", source: "/spec/externalTrafficPolicy", derived: "/spec/healthCheckNodePort",
		// kubernetes pkg/registry/core/service/storage/alloc.go
		// (allocHealthCheckNodePort, and its release when the Service no
		// longer needs one: needsHCNodePort).
		why: "the API server allocates healthCheckNodePort for externalTrafficPolicy Local and releases it when the apply sets the policy back",
		creates: func(d map[string]any) string {
			typ, _, _ := unstructured.NestedString(d, "spec", "type")
			policy, _, _ := unstructured.NestedString(d, "spec", "externalTrafficPolicy")
			if typ == "LoadBalancer" && policy == "Local" {
				return "the apply sets externalTrafficPolicy Local on a LoadBalancer Service and the API server allocates healthCheckNodePort in the same write"
			}
			return ""
		}},
}

// addDerived lists the derived fields whose source the apply reverts:
// they change in the same write (a field no one named would be missed).
func (j *judgment) addDerived(rep *model.Report) {
	if j.live == nil {
		return
	}
	gvk := j.live.GroupVersionKind()
	reverted := map[string]bool{}
	at := map[string]int{}
	for i, d := range rep.Drifts {
		at[d.Path] = i
		for _, v := range d.Verdicts {
			if v.Engine == Engine && v.Kind == model.Reverted {
				reverted[d.Path] = true
			}
		}
	}
	added := false
	for _, sd := range serverDerivedFields {
		if sd.group != gvk.Group || sd.kind != gvk.Kind || !reverted[sd.source] {
			continue
		}
		lv, ok := jsonpointer.Get(j.live.Object, sd.derived)
		why, change := sd.why, model.Added
		if !ok {
			// The live object lacks it: the apply brings it in when the
			// server computes it for the manifest (make differential seed
			// 40412: Git sets externalTrafficPolicy Local, the server
			// allocated healthCheckNodePort; -f named nothing there).
			if why, change = j.derivedCreated(sd), model.Removed; why == "" {
				continue
			}
		}
		v := model.Verdict{Engine: Engine, Kind: model.Reverted,
			Reason: j.caveat(why + ": it goes with " + sd.source + ", which is reverted " + j.every())}
		if i, listed := at[sd.derived]; listed {
			rep.Drifts[i].Verdicts = setVerdict(rep.Drifts[i].Verdicts, v)
			continue
		}
		rep.Drifts = append(rep.Drifts, model.FieldDrift{Path: sd.derived, FieldPath: fieldPathOf(sd.derived),
			Change: change, Live: lv, Managers: j.ownersOf(j.live, sd.derived), Cause: model.CauseUnknown,
			Verdicts: []model.Verdict{v}})
		added = true
	}
	if added {
		sort.SliceStable(rep.Drifts, func(a, b int) bool { return rep.Drifts[a].Path < rep.Drifts[b].Path })
	}
}

// derivedCreated says why the apply brings in sd's derived field the live
// object lacks, or "" (no manifest, or the server does not compute it for
// the manifest).
func (j *judgment) derivedCreated(sd serverDerived) string {
	if sd.creates == nil || j.normDesired == nil {
		return ""
	}
	return sd.creates(j.normDesired.Object)
}

// setVerdict replaces Flux's verdict in vs (or adds it).
func setVerdict(vs []model.Verdict, v model.Verdict) []model.Verdict {
	for i := range vs {
		if vs[i].Engine == Engine {
			vs[i] = v
			return vs
		}
	}
	return append(vs, v)
}

// ownersOf are the managers of the field at pointer.
func (j *judgment) ownersOf(obj *unstructured.Unstructured, pointer string) []model.ManagerRef {
	if j.ix == nil {
		return nil
	}
	return j.ix.Owners(obj, pointer)
}

// fieldPathOf is a map-only pointer as a field path (".spec.x").
func fieldPathOf(pointer string) string {
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return pointer
	}
	out := ""
	for _, t := range tokens {
		out += "." + t
	}
	return out
}

// derivedOfIgnored says whether pointer is a field the API server derives
// from a source that an ignore rule keeps from changing. The tool's
// dry-run sends the manifest's value of the source, but kustomize-controller
// sends the live one (Adopt) or none (Strip) in its place (fluxcd/pkg ssa
// manager_apply.go computeDriftedPaths, applyDriftResult), so the server
// derives nothing new (make differential seed 42340, class R14: Git sets
// externalTrafficPolicy Local under an ignore rule; the dry-run allocated
// healthCheckNodePort, the controller's apply did not).
func (j *judgment) derivedOfIgnored(rep *model.Report, pointer string) bool {
	if j.live == nil {
		return false
	}
	gvk := j.live.GroupVersionKind()
	for _, sd := range serverDerivedFields {
		if sd.derived != pointer || sd.group != gvk.Group || sd.kind != gvk.Kind {
			continue
		}
		for _, d := range rep.Drifts {
			if d.Path != sd.source {
				continue
			}
			for _, v := range d.Verdicts {
				if v.Engine == Engine && v.Kind == model.Ignored {
					return true
				}
			}
		}
	}
	return false
}

// derivedKeptByRule says whether pointer lies in a field the API server
// derives (serverDerivedFields) from a source an ignore rule keeps from
// changing, and the controller's apply leaves its live value: the tool's
// dry-run sends the manifest's value of the source, kustomize-controller
// the live one (Adopt) or none (Strip: the live one stays), fluxcd/pkg ssa
// manager_apply.go computeDriftedPaths, applyDriftResult. So the dry-run
// result is read with the source's live value put back and defaulted again
// as the API server defaults every write (kube.Stored); pointer keeps its
// live value there (make differential seed 44284, class R15 under R14's
// rule: Git's sessionAffinity None under an ignore rule, another manager
// forced ClientIP; the dry-run lost sessionAffinityConfig, the controller
// kept ClientIP and the config).
func (j *judgment) derivedKeptByRule(pointer string) bool {
	if j.live == nil || j.merged == nil && j.normDesired == nil {
		return false
	}
	gvk := j.live.GroupVersionKind()
	lv, lok := jsonpointer.Get(j.live.Object, pointer)
	var base *unstructured.Unstructured
	for _, sd := range serverDerivedFields {
		if sd.group != gvk.Group || sd.kind != gvk.Kind || pointer != sd.derived && !strings.HasPrefix(pointer, sd.derived+"/") {
			continue
		}
		if r, _ := j.ruleFor(sd.source); r == nil {
			continue
		}
		var removed []string
		var sets map[string]any
		if sv, ok := jsonpointer.Get(j.live.Object, sd.source); ok {
			sets = nested(sd.source, sv)
		} else {
			removed = []string{sd.source}
		}
		if base == nil {
			base = j.applyBase()
		}
		res, ok := kube.Stored(kube.Applied(base, removed, sets))
		if !ok {
			continue
		}
		rv, rok := jsonpointer.Get(res.Object, pointer)
		if rok == lok && (!rok || apiequality.Semantic.DeepEqual(diff.NormalizeNumber(rv), diff.NormalizeNumber(lv))) {
			return true
		}
	}
	return false
}

// applyBase is what the next apply writes, as far as derivedKeptByRule
// reads it: the dry-run's answer, or with -f the manifest written over
// live, off which only a field the server derives is read (make
// differential seed 68552: Git adds sessionAffinity ClientIP under an
// ignore rule that adopts the live None; -f said the defaulted
// sessionAffinityConfig is reverted, the controller wrote none). Built
// only for a derived field under a rule, not for every drift, and once.
func (j *judgment) applyBase() *unstructured.Unstructured {
	if j.merged != nil {
		return j.merged
	}
	return kube.Applied(j.live, nil, j.normDesired.Object)
}

// nested is value at the map-only pointer p as nested maps ({"spec":
// {"x": value}} for /spec/x); nil for a pointer that does not parse.
func nested(p string, value any) map[string]any {
	tokens, err := jsonpointer.Parse(p)
	if err != nil || len(tokens) == 0 {
		return nil
	}
	out := map[string]any{tokens[len(tokens)-1]: value}
	for i := len(tokens) - 2; i >= 0; i-- {
		out = map[string]any{tokens[i]: out}
	}
	return out
}
