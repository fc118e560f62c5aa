package argocd

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// liveOnlyVerdict is the one place of class W3 (docs/verdicts.md): in
// inferred mode without Argo CD's last sync (no comparison ran: a kubectl
// edit or apply rewrote last-applied-configuration, or there is none) and
// without ServerSideApply, a field live added that the live
// last-applied-configuration does not hold is left alone. gitops-engine
// pkg/diff/diff.go Diff takes that annotation, whoever wrote it, as the
// "orig" of ThreeWayDiff, and the 3-way patch from it to Git's manifest
// deletes only fields the orig lists (without the annotation TwoWayDiff
// takes Git's manifest as orig, which never lists a live-only field): a
// live-only label or annotation stays, Argo CD's diff does not show it
// and a sync keeps it. Seen on Argo CD v3.2.11: a kubectl annotate, then a
// kubectl edit, which patched last-applied with its own change only (seeds
// 5046, 5023; owner-annotation-label/w3-live-only-annotation-and-edit).
func liveOnlyVerdict(live *unstructured.Unstructured, d *model.FieldDrift, cfg *compareConfig, cmp *comparison) (model.Verdict, bool) {
	if cmp.ok || cfg.structuredMerge || d.Change != model.Added || inLastApplied(live, d.Path) {
		return model.Verdict{}, false
	}
	return model.Verdict{Engine: Engine, Kind: model.LeftAlone,
		Reason: "not in last-applied-configuration: Argo CD's 3-way diff removes only fields its last apply set"}, true
}

// inLastApplied says whether live's last-applied-configuration, whoever
// wrote it, has the field at p.
func inLastApplied(live *unstructured.Unstructured, p string) bool {
	la, err := lastApplied(live)
	if err != nil || la == nil {
		return false
	}
	_, ok := jsonpointer.Get(la.Object, p)
	return ok
}
