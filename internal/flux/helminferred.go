package flux

import (
	"slices"
	"sort"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// alignWithRelease makes inferred mode on a Helm object (the release
// manifest read from its Secret) list what helm-controller's drift
// detection compares: the release manifest's dry-run with the live object,
// whoever wrote it (internal/action/diff.go Diff, jsondiff.UnstructuredList;
// ApplyDiff patches the difference back in mode enabled).
//   - A field inference listed whose live value is the release's is no
//     drift: kubectl took ownership of a value it did not change (a
//     client-side apply sends the chart's `rules: []`, which the API
//     server stores as null like helm-controller's own apply: seeds 60374,
//     60451, class H9), or wrote the chart's own value back (H3). With -f
//     the comparison never lists it either.
//   - A field the release sets whose live value differs while neither
//     helm-controller nor the Helm SDK owns it is drift inference does not
//     list: another GitOps engine's manager (argocd-controller) or a
//     built-in controller wrote it (seed 9046: a PodDisruptionBudget's
//     maxUnavailable applied as argocd-controller, put back, not named).
//   - A field the release sets that live lacks leaves no trace in
//     managedFields: the comparison -f makes (diff.Compute) names it
//     (seed 48839: a person's client-side apply whose manifest dropped
//     the labels map deleted helm-controller's ownership labels;
//     Drifted=True in warn mode, inferred named nothing).
func (j *judgment) alignWithRelease(rep *model.Report) {
	if !j.fromRelease || j.live == nil {
		return
	}
	rep.Drifts = slices.DeleteFunc(rep.Drifts, func(d model.FieldDrift) bool {
		_, set, differs := j.releaseDiffers(d.Path)
		return set && !differs
	})
	listed := make([]string, 0, len(rep.Drifts))
	for _, d := range rep.Drifts {
		listed = append(listed, d.Path)
	}
	added := false
	if removed, err := diff.Compute(j.desired, j.live, diff.Options{Owned: func(string) bool { return true }, Index: j.ix}); err == nil {
		for _, d := range removed {
			if d.Change != model.Removed || d.Desired == nil || relatedToAny(d.Path, listed) || diff.IsServerBookkeeping(d.Path) {
				continue
			}
			if redact.ValuePath(d.Path) {
				d.Desired = redact.Value(d.Desired)
			}
			rep.Drifts = append(rep.Drifts, d)
			listed = append(listed, d.Path)
			added = true
		}
	}
	if j.ix != nil {
		for _, leaf := range j.ix.Leaves(j.live) {
			p := leaf.Pointer
			if p == "/status" || strings.HasPrefix(p, "/status/") || j.helmOwned(leaf.Owners) || relatedToAny(p, listed) {
				continue
			}
			want, _, differs := j.releaseDiffers(p)
			if !differs {
				continue
			}
			lv, _ := jsonpointer.Get(j.live.Object, p)
			if redact.ValuePath(p) {
				lv, want = redact.Value(lv), redact.Value(want)
			}
			rep.Drifts = append(rep.Drifts, model.FieldDrift{Path: p, FieldPath: leaf.FieldPath, Change: model.Changed,
				Desired: want, Live: lv, Managers: leaf.Owners, Cause: causeOf(leaf.Owners)})
			listed = append(listed, p)
			added = true
		}
	}
	if added {
		sort.SliceStable(rep.Drifts, func(a, b int) bool { return rep.Drifts[a].Path < rep.Drifts[b].Path })
	}
}

// helmOwned says whether helm-controller or the Helm SDK owns the field
// (outside subresources): inference already judged such a field the
// engine's own.
func (j *judgment) helmOwned(owners []model.ManagerRef) bool {
	for _, m := range owners {
		if m.Subresource == "" && (m.Manager == j.manager || m.Manager == helmSDKManager) {
			return true
		}
	}
	return false
}

// atomicReplaced says whether d, which the release manifest does not set,
// lies inside an atomic value the release sets and another manager wrote
// (a ClusterRole's rules: []): the dry-run apply as helm-controller
// replaces that value whole, and ApplyDiff patches the difference back
// (seed 60328, class H8: an aggregated role's rules put back to []). A
// server default inside it comes back with the release's value: inside
// the atomic volumeClaimTemplates only Helm wrote (seeds 60658, 60765:
// apiVersion, volumeMode), or a NetworkPolicy port's protocol after a
// client-side apply took its atomic list (seed 60639).
func (j *judgment) atomicReplaced(d *model.FieldDrift) bool {
	if j.atomicAncestorInManifest(d, j.notHelm(d.Managers)) == "" {
		return false
	}
	tokens, err := jsonpointer.Parse(d.Path)
	if err != nil {
		return false
	}
	lv, _ := jsonpointer.Get(j.live.Object, d.Path)
	gvk := j.live.GroupVersionKind()
	return !diff.IsServerDefault(gvk.Group, gvk.Kind, tokens, lv, j.live.Object)
}

// notHelm are the managers in owners other than helm-controller and the
// Helm SDK.
func (j *judgment) notHelm(owners []model.ManagerRef) []model.ManagerRef {
	return slices.DeleteFunc(slices.Clone(owners), func(m model.ManagerRef) bool {
		return m.Manager == j.manager || m.Manager == helmSDKManager
	})
}

// releaseDiffers returns the release manifest's value at p, whether the
// release sets p, and whether the live value differs from it both as
// written and after Flux's typed normalization (a quantity's canonical
// form); a value live lacks differs (seed 48839: labels a client-side
// apply deleted). An empty list or map the release sets equals a live null
// or absent value: the API server stores an empty value of a field without
// omitempty as null, and the dry-run of the release gets the same.
func (j *judgment) releaseDiffers(p string) (want any, set, differs bool) {
	if j.desired == nil || j.live == nil {
		return nil, false, false
	}
	lv, lok := jsonpointer.Get(j.live.Object, p)
	for _, o := range []map[string]any{j.desired.Object, normObject(j)} {
		if o == nil {
			continue
		}
		v, ok := j.lookupKeyed(o, p)
		if !ok {
			continue
		}
		if (lok && apiequality.Semantic.DeepEqual(v, lv)) || (emptyValue(v) && (!lok || lv == nil)) {
			return v, true, false
		}
		if !set {
			want, set = v, true
		}
	}
	return want, set, set
}

// emptyValue: an empty list or map.
func emptyValue(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func normObject(j *judgment) map[string]any {
	if j.normDesired == nil {
		return nil
	}
	return j.normDesired.Object
}

// causeOf is the class of the most recent owner (managedfields.Index
// classifies every owner).
func causeOf(owners []model.ManagerRef) model.CauseClass {
	for _, m := range owners {
		if m.Class != "" {
			return m.Class
		}
	}
	return model.CauseUnknown
}

func relatedToAny(p string, set []string) bool {
	for _, s := range set {
		if p == s || strings.HasPrefix(p, s+"/") || strings.HasPrefix(s, p+"/") {
			return true
		}
	}
	return false
}
