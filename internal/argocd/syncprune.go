package argocd

import (
	"strings"

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
// A field an ignoreDifferences rule hides is deleted the same way
// (prunable). A ServerSideApply=true sync deletes such fields only in its
// client-side apply migration step (csaMigrates). fromLastApplied: desired
// is last-applied-configuration (inferred mode), so a field it sets that
// the computed sync leaves is reported too.
func syncPrunes(rep *model.Report, live, desired *unstructured.Unstructured, sync *clientSideSync, app *Application, fromLastApplied bool) {
	if sync == nil {
		return
	}
	ssa := syncsServerSide(app, desired)
	if ssa && !csaMigrates(live, app) {
		return
	}
	// Without the annotation kubectl's patch has no original: it deletes
	// nothing (orig nil lists nothing).
	orig := sync.orig
	why := SyncDeletesPhrase + ": " + clientSideDeletes
	if ssa {
		why = SyncDeletesPhrase + ": " + migrationDeletes
	}
	respect := app.HasSyncOption("RespectIgnoreDifferences=true")
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		v := verdictOf(*d, Engine)
		if v == nil {
			continue
		}
		if !ssa && v.Kind == model.LeftAlone && strings.HasPrefix(v.Reason, secretStatusOnly) && sync.leaves(d.Path) {
			// The status diff is a server-side apply's (ServerSideDiff),
			// which prunes what argocd-controller applied alone; the
			// client-side sync deletes only what last-applied-configuration
			// lists (seed 62338: an annotation a server-side apply as
			// argocd-controller wrote, which the sync kept).
			nv := *v
			nv.Reason = secretStatusOnly + "the object is OutOfSync and " + clientSideSyncLeaves
			d.SetVerdict(nv)
			continue
		}
		if !ssa && sync.respect && v.Kind == model.Reverted && sync.leaves(d.Path) {
			// The respected sync's target lacks what a rule removed
			// and live lacks too (syncTarget, seed 59114, A28).
			syncLeaves(d, *v, respectedSyncLeavesPhrase)
			continue
		}
		if v.Kind == model.Reported && strings.Contains(v.Reason, respectCopiesPhrase) {
			continue
		}
		if !ssa && (v.Kind == model.Reverted || v.Kind == model.Reported) && pointerPresent(orig, d.Path) &&
			(d.Change == model.Added && !pointerPresent(desired, d.Path) || fromLastApplied) {
			if sync.leaves(d.Path) {
				// last-applied-configuration lists it (as an empty
				// annotations map, say) and the patch still leaves live's
				// value: the sync writes the annotation as it was
				// (withLastApplied), and the object stays OutOfSync
				// (seed 54139, A23; in inferred mode, where the target
				// is that annotation, too).
				syncLeaves(d, *v, syncLeavesPhrase)
			}
			continue
		}
		if d.Change != model.Added || pointerPresent(desired, d.Path) {
			continue
		}
		if !ssa && (v.Kind == model.Reverted || v.Kind == model.Reported) {
			if changed, what := sync.changes(d.Path); changed {
				// last-applied-configuration does not list it, yet
				// the object the sync leaves differs there: Git sets
				// the list it is an item of (an aggregated
				// ClusterRole's rules: [] empties what the aggregation
				// controller wrote: seeds 52096, 50239, A13), or the
				// patch sets back a field the server derives it from
				// and the server's defaulting of the result drops or
				// refills it (a Service's sessionAffinityConfig once
				// sessionAffinity is None again: seed 52103, R15).
				nv := *v
				nv.Reason += "; last-applied-configuration does not list it, but the object the sync leaves (kubectl's 3-way patch applied to live, then the API server's defaulting, kubernetes pkg/apis/*/v1 defaults.go) " + what
				d.SetVerdict(nv)
				continue
			}
			// Shown by a server-side diff (argocd-controller applied it
			// last), yet the client-side sync keeps it: OutOfSync for good.
			syncLeaves(d, *v, SyncKeepsPhrase)
			continue
		}
		if !prunable(*v, d.Path, respect) {
			continue
		}
		nv := *v
		switch {
		case pointerPresent(orig, d.Path):
			nv.Reason += "; the object is OutOfSync and " + why
		case !ssa && sync.removes(d.Path):
			// last-applied-configuration does not list it, but it lists
			// the map that holds it, which Git's manifest leaves out: the
			// patch deletes the whole map (differential seeds 60988,
			// 60459: a label kubectl label added, gone after self-heal
			// with the labels a person's kubectl apply had listed).
			nv.Reason += "; the object is OutOfSync and " + SyncDeletesPhrase + ": " + mapDeletes
		default:
			continue
		}
		d.SetVerdict(nv)
	}
}

// syncLeaves makes d's verdict v reported: the object stays OutOfSync
// after a sync, for the reason why.
func syncLeaves(d *model.FieldDrift, v model.Verdict, why string) {
	v.Kind = model.Reported
	v.Reason = "OutOfSync; " + why
	d.SetVerdict(v)
}

// prunable: a field Argo CD's diff leaves out that the sync's target does
// not have either. Left alone, or hidden by an ignoreDifferences rule:
// the rule hides the field from the diff, not from the sync, unless
// RespectIgnoreDifferences=true, with which the sync's target takes the
// live value of every ignored field (argo-cd controller/sync.go
// normalizeTargetResources: the patch from normalized live to live is
// applied to the normalized target), so the sync keeps it. Differential
// seeds 50256, 50291, 50525: a label, a Job's activeDeadlineSeconds under
// a jq rule that Git lacks and last-applied-configuration lists, deleted
// by self-heal. The tracking marks' own rule is no user rule
// (syncReapplies leaves them out too).
func prunable(v model.Verdict, path string, respect bool) bool {
	switch v.Kind {
	case model.LeftAlone:
		return true
	case model.Ignored:
		return !respect && userRuleIgnored(v, path)
	}
	return false
}

// userRuleIgnored: an ignored field hidden by a user's ignoreDifferences
// rule (not the tracking marks' own), outside status: what a sync's
// target copies from live under RespectIgnoreDifferences=true, and what it
// deletes without it.
func userRuleIgnored(v model.Verdict, path string) bool {
	return v.Rule != nil && !strings.HasPrefix(v.Rule.Object, "Argo CD resource tracking") && !strings.HasPrefix(path, "/status")
}

// csaMigrates: a ServerSideApply=true sync of an object with fields of
// kubectl-client-side-apply (a person's kubectl apply) first applies the
// target client-side as that manager, so that kubectl's server-side apply
// after it hands those fields to argocd-controller (gitops-engine
// pkg/sync/sync_context.go applyObject: needsClientSideApplyMigration,
// performClientSideApplyMigration; on by default, argo-cd
// controller/sync.go: off with ClientSideApplyMigration=false, another
// manager by the Application annotation
// argocd.argoproj.io/client-side-apply-migration-manager). That step is a
// client-side kubectl apply: its 3-way patch deletes what the live
// last-applied-configuration lists and Git does not. Differential seeds
// 50358, 50589: a label, an annotation a person's kubectl apply added,
// hidden by a rule, deleted by self-heal's server-side sync.
func csaMigrates(live *unstructured.Unstructured, app *Application) bool {
	if app.HasSyncOption("ClientSideApplyMigration=false") {
		return false
	}
	manager := csaMigrationManager(app)
	for _, f := range live.GetManagedFields() {
		if f.Manager == manager {
			return true
		}
	}
	return false
}

// csaMigrationManager is the manager a ServerSideApply=true sync
// migrates (argo-cd controller/sync.go).
func csaMigrationManager(app *Application) string {
	if m := app.Metadata.Annotations[AnnotationCSAMigrationManager]; m != "" {
		return m
	}
	return DefaultCSAMigrationManager
}

// AnnotationCSAMigrationManager on an Application names the manager whose
// fields a ServerSideApply=true sync migrates (argo-cd common/common.go
// AnnotationClientSideApplyMigrationManager).
const AnnotationCSAMigrationManager = "argocd.argoproj.io/client-side-apply-migration-manager"

// DefaultCSAMigrationManager is that manager when the annotation is not
// set (gitops-engine pkg/sync/common/types.go
// DefaultClientSideApplyMigrationManager).
const DefaultCSAMigrationManager = "kubectl-client-side-apply"

const clientSideDeletes = "last-applied-configuration lists it and Git does not, and Argo CD syncs with a client-side kubectl apply, whose 3-way patch deletes such fields"

const mapDeletes = "last-applied-configuration lists the map that holds it and Git's manifest leaves the map out, and Argo CD syncs with a client-side kubectl apply, whose 3-way patch then deletes the whole map"

const migrationDeletes = "last-applied-configuration lists it and Git does not; with ServerSideApply=true Argo CD first migrates kubectl-client-side-apply's fields with a client-side kubectl apply of Git's manifest (ClientSideApplyMigration), whose 3-way patch deletes such fields"

// SyncDeletesPhrase ends the reason of a field Argo CD's diff does not
// show that a sync of the OutOfSync object deletes (selfHeal's sync does
// it on its own); the differential harness reads it, as it reads
// SyncReappliesPhrase.
const SyncDeletesPhrase = "a sync deletes it"

// clientSideSyncLeaves ends the reason of a field only Argo CD's status
// diff shows that the client-side sync leaves as it is.
const clientSideSyncLeaves = "a sync does not change it: Argo CD syncs with a client-side kubectl apply, whose 3-way patch deletes only what last-applied-configuration lists, and the object it leaves holds the live value here"

// syncLeavesPhrase ends the reason of a field Argo CD's diff shows that
// last-applied-configuration lists and the client-side sync still leaves.
const syncLeavesPhrase = "a sync does not change it: Argo CD syncs with a client-side kubectl apply, and the object its 3-way patch leaves (with the last-applied-configuration kubectl writes, the manifest it applies) holds the live value here, so the object stays OutOfSync after the sync"

// respectedSyncLeavesPhrase ends the reason of a field Argo CD's diff
// shows that a sync with RespectIgnoreDifferences=true leaves as it is.
const respectedSyncLeavesPhrase = "a sync does not change it: with RespectIgnoreDifferences=true Argo CD applies (client-side or server-side) its normalized target (Git's manifest without what the ignoreDifferences rules remove, with live's values of the fields they hide put back: argo-cd controller/sync.go normalizeTargetResources), and the object that apply leaves holds the live value here, so the object stays OutOfSync after the sync"

// SyncKeepsPhrase ends the reason of a field Argo CD's diff shows that its
// sync does not change (the object stays OutOfSync after a sync, also
// selfHeal's); the differential harness reads it.
const SyncKeepsPhrase = "a sync does not remove it: Argo CD syncs with a client-side kubectl apply, whose 3-way patch deletes only what last-applied-configuration lists, and it does not list this field, so the object stays OutOfSync after the sync"
