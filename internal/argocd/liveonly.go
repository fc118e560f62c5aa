package argocd

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// keepLiveOnly gives, without a desired state (inferred mode) and when the
// object's last-applied-configuration is not Argo CD's own (a kubectl edit
// or apply rewrote it, so it cannot stand in for Git), the verdict Argo
// CD's 3-way diff gives a field that the last-applied-configuration does
// not hold: left-alone. gitops-engine pkg/diff ThreeWayDiff takes that
// annotation as the original, and a strategic (or JSON) merge patch from
// it to Git's manifest deletes only the fields the original lists: a
// live-only label or annotation stays, and Argo CD's diff does not show it
// (class W3 of docs/verdicts.md: a kubectl annotate, then a kubectl edit,
// which patches last-applied with its own change only). Paths through a
// list item are left as judged: an item's index in live need not be its
// index in the annotation.
func keepLiveOnly(drifts []model.FieldDrift, live *unstructured.Unstructured) {
	la, err := lastApplied(live)
	if err != nil || la == nil || argoLastApplied(live) != nil {
		return
	}
	for i := range drifts {
		d := &drifts[i]
		v := verdictOf(*d, Engine)
		if v == nil || (v.Kind != model.Reported && v.Kind != model.Reverted) || d.Change == model.Removed || throughList(d.Path) {
			continue
		}
		if _, in := jsonpointer.Get(la.Object, d.Path); in {
			continue
		}
		d.SetVerdict(model.Verdict{Engine: Engine, Kind: model.LeftAlone,
			Reason: "not in the object's last-applied-configuration, which Argo CD's 3-way diff takes as the original: a field the original does not list is kept, so Argo CD's diff does not show it and a sync keeps it"})
	}
}

// throughList: a segment of p indexes a list.
func throughList(p string) bool {
	segs, err := jsonpointer.Parse(p)
	if err != nil {
		return true
	}
	for _, s := range segs {
		if _, err := strconv.Atoi(s); err == nil {
			return true
		}
	}
	return false
}
