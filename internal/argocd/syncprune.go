package argocd

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// syncPrunes: a field Argo CD's diff leaves out can still change when the
// object is OutOfSync for another field and is synced. Without
// ServerSideApply=true the sync is a client-side kubectl apply of Git's
// manifest (gitops-engine pkg/utils/kube/resource_ops.go ApplyResource),
// whose 3-way patch deletes every field the live
// last-applied-configuration lists and the manifest does not
// (k8s.io/kubectl pkg/cmd/apply/patcher.go, CreateThreeWayMergePatch with
// that annotation as "original"), whoever wrote the annotation: a
// kubectl apply by hand that added a label leaves it there, and a
// server-side diff (ServerSideDiff=true) does not show the label, yet the
// sync removes it (differential seed 20056: selfHeal removed
// /metadata/labels/audited). The field stays left alone (Argo CD's diff
// does not show it) and the reason says a sync deletes it, as
// syncReapplies says of ignored fields. The reverse: a
// live-only field the server-side diff shows (argocd-controller applied
// it last, by a server-side apply) that last-applied-configuration does
// not list survives the sync (seed 20086: /metadata/labels/quota shown,
// selfHeal kept it): reported, not reverted, whatever the sync policy.
func syncPrunes(rep *model.Report, live, desired *unstructured.Unstructured, app *Application) {
	if desired == nil || app == nil || app.HasSyncOption("ServerSideApply=true") ||
		hasAnnotationOption(desired.GetAnnotations(), AnnotationSyncOptions, "ServerSideApply=true") {
		return
	}
	// Without the annotation kubectl's patch has no original: it deletes
	// nothing (orig nil lists nothing).
	orig, err := lastApplied(live)
	if err != nil {
		return
	}
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		v := verdictOf(*d, Engine)
		if v == nil || d.Change != model.Added || pointerPresent(desired, d.Path) {
			continue
		}
		if (v.Kind == model.Reverted || v.Kind == model.Reported) && !pointerPresent(orig, d.Path) {
			// Shown by a server-side diff (argocd-controller applied it
			// last), yet the client-side sync keeps it: OutOfSync for good.
			nv := *v
			nv.Kind = model.Reported
			nv.Reason = "OutOfSync; " + SyncKeepsPhrase
			d.SetVerdict(nv)
			continue
		}
		if v.Kind != model.LeftAlone || !pointerPresent(orig, d.Path) {
			continue
		}
		nv := *v
		nv.Reason += "; the object is OutOfSync and " + SyncDeletesPhrase
		d.SetVerdict(nv)
	}
}

// SyncDeletesPhrase ends the reason of a field Argo CD's diff does not
// show that a sync of the OutOfSync object deletes (selfHeal's sync does
// it on its own); the differential harness reads it, as it reads
// SyncReappliesPhrase.
const SyncDeletesPhrase = "a sync deletes it: last-applied-configuration lists it and Git does not, and Argo CD syncs with a client-side kubectl apply, whose 3-way patch deletes such fields"

// SyncKeepsPhrase ends the reason of a field Argo CD's diff shows that its
// sync does not change (the object stays OutOfSync after a sync, also
// selfHeal's); the differential harness reads it.
const SyncKeepsPhrase = "a sync does not remove it: Argo CD syncs with a client-side kubectl apply, whose 3-way patch deletes only what last-applied-configuration lists, and it does not list this field, so the object stays OutOfSync after the sync"
