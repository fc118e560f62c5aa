package argocd

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	smdfieldpath "sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// ServerSetsAgainPhrase ends the reason of a field Argo CD's diff shows
// that its server-side apply sync leaves as it is (the differential
// harness reads the verdict, reported).
const ServerSetsAgainPhrase = "a sync does not change it: Argo CD's server-side apply prunes it, and the API server sets it again (it decodes the object into its Go type, defaults and converts it, and encodes it again), so the object stays OutOfSync after the sync"

// serverSideSyncKeeps: a ServerSideApply=true sync (selfHeal's too) is a
// server-side apply of the target as argocd-controller (gitops-engine
// pkg/sync/sync_context.go applyObject, pkg/utils/kube/resource_ops.go
// ApplyResource with serverSideApply). What it stores is localApply's
// object: the merge of the target into live, then the API server's decode,
// defaulting, conversion and encode (serverRoundTrip). A field Argo CD's
// diff shows that holds its live value in that object is one the apply
// prunes and the server sets again: a StatefulSet claim template's
// apiVersion and kind (the conversion to apps/v1 writes them), a
// container's resources: {} (its type always encodes it). The sync
// changes nothing there: reported, not reverted (differential seeds 50336,
// 50389, 50562: Argo CD OutOfSync on them before and after self-heal).
// In inferred mode the target is Argo CD's last sync (last-applied-
// configuration), the same apply (class I8, session 15, seed 55212: an
// untouched StatefulSet's claim template apiVersion and kind were called
// reverted; self-heal left them and Argo CD stayed OutOfSync).
// after is that object (serverSideSync); without a schema for the kind
// the apply cannot be computed and the verdicts stay.
func serverSideSyncKeeps(rep *model.Report, live *unstructured.Unstructured, cmp *comparison, app *Application, after *unstructured.Unstructured) {
	if after == nil {
		return // a client-side sync, or one that cannot be computed
	}
	respect := app.HasSyncOption("RespectIgnoreDifferences=true")
	var next *normResult // the comparison after the sync, read lazily
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		v := verdictOf(*d, Engine)
		if v == nil {
			continue
		}
		if app.SelfHeal() && (v.Kind == model.Ignored || v.Kind == model.Reported && strings.Contains(v.Reason, respectCopiesPhrase)) {
			if next == nil {
				next = cmp.cfg.normalizePair(after, cmp.desired)
			}
			if nv, ok := exposedBySync(d, *v, cmp.cfg, next); ok {
				d.SetVerdict(nv)
				continue
			}
		}
		lv, inLive := jsonpointer.Get(live.Object, d.Path)
		av, inAfter := jsonpointer.Get(after.Object, d.Path)
		switch {
		case v.Kind == model.Reverted && respect && !inLive && !inAfter:
			// What a rule removed from the target that live lacks
			// (A28, as for a client-side sync).
			syncLeaves(d, *v, respectedSyncLeavesPhrase)
		case v.Kind == model.Reverted && inLive && inAfter && jsonEqual(lv, av):
			syncLeaves(d, *v, ServerSetsAgainPhrase)
		case d.Change == model.Added && inLive && (!inAfter || !jsonEqual(lv, av)) && prunable(*v, d.Path, respect) &&
			!strings.Contains(v.Reason, SyncDeletesPhrase) && !pointerPresent(cmp.desired, d.Path):
			nv := *v
			nv.Reason += "; the object is OutOfSync and " + SyncDeletesPhrase + ": " + migratedPrunes
			if inAfter {
				// Pruned, then defaulted again (seed 62864: a
				// Deployment's replicas 2, which Git dropped, is 1
				// after the sync).
				nv.Reason += fmt.Sprintf(", and the API server's defaulting sets it to %v in the same write", av)
			}
			d.SetVerdict(nv)
		}
	}
}

// serverSideSync is the object a ServerSideApply=true sync of cmp's
// desired state over live leaves (serverSideSyncResult); nil for a
// client-side sync, or when the apply cannot be computed (no schema for
// the kind). With RespectIgnoreDifferences=true the apply's target is the
// normalized one (syncTarget), as for a client-side sync.
func serverSideSync(live *unstructured.Unstructured, cmp *comparison, app *Application, sync *clientSideSync) *unstructured.Unstructured {
	if cmp == nil || cmp.cfg == nil || cmp.desired == nil || app == nil || live == nil || !syncsServerSide(app, cmp.desired) {
		return nil
	}
	if cmp.cfg.parser == nil || cmp.cfg.parser.Type(live.GroupVersionKind()) == nil {
		return nil
	}
	// The client-side sync of the same target (sync) is the migration
	// step's write: its target and result (nil when kubectl's patch
	// cannot be computed) are computed once, there.
	var target, migrated *unstructured.Unstructured
	if sync != nil {
		sync.computed()
		target, migrated = sync.target, sync.result
	} else {
		target = syncTarget(cmp.res, live, cmp.desired, app.HasSyncOption("RespectIgnoreDifferences=true"))
	}
	if target == nil {
		return nil
	}
	after, err := serverSideSyncResult(cmp.cfg, live, target, migrated, app)
	if err != nil {
		return nil
	}
	return after
}

// exposedBySync: a field a rule hides now that the rules no longer hide
// in the comparison of the object the sync leaves (next), where it still
// differs from Git: still ignored, with the reason saying a sync writes
// it back (reverted where it is reported in a map Argo CD's diff shows
// and RespectIgnoreDifferences copied its live value into the first
// sync: seed 63833). A managedFieldsManagers rule hides what its manager
// owns, and the server-side sync hands kubectl-client-side-apply's fields
// to argocd-controller (the client-side apply migration, then kubectl's
// migrateToSSAIfNecessary): Argo CD is then OutOfSync on the field, and
// self-heal's next sync, whose target the rule no longer touches, writes
// Git's value (differential seed 62591: a person's kubectl apply of an
// Ingress annotation under a managers rule for kubectl-client-side-apply,
// with RespectIgnoreDifferences=true; the first sync kept the value, the
// second wrote Git's, and Argo CD was Synced).
func exposedBySync(d *model.FieldDrift, v model.Verdict, cfg *compareConfig, next *normResult) (model.Verdict, bool) {
	if next == nil || next.Live == nil || next.Target == nil {
		return model.Verdict{}, false
	}
	if _, hidden := ruleVerdict(d, cfg, next); hidden {
		return model.Verdict{}, false
	}
	lv, inLive := jsonpointer.Get(next.Live.Object, d.Path)
	tv, inTarget := jsonpointer.Get(next.Target.Object, d.Path)
	if inLive == inTarget && (!inLive || jsonEqual(lv, tv)) {
		return model.Verdict{}, false
	}
	// What happens to the field comes first: the text output cuts
	// reasons to three lines.
	nv := v
	if v.Kind == model.Reported {
		// Shown in a map Argo CD's diff shows (respectCopiesPhrase,
		// seed 63833): the second sync reverts it.
		nv.Kind = model.Reverted
		nv.Reason = "reverted by self-heal's second sync: " + v.Reason + "; but " + exposedPhrase
		return nv, true
	}
	// Still ignored now (Argo CD's diff does not show it), but
	// written back by the sync after next.
	nv.Reason = "ignored now, but " + SyncReappliesPhrase + " (self-heal's second sync): " + v.Reason + "; " + exposedPhrase
	return nv, true
}

// exposedPhrase is in the reason of exposedBySync's verdict.
const exposedPhrase = "the first sync, a server-side apply as argocd-controller, takes over the fields of the client-side apply that wrote last-applied-configuration (gitops-engine pkg/sync/sync_context.go performClientSideApplyMigration, k8s.io/kubectl pkg/cmd/apply/apply.go migrateToSSAIfNecessary), after which no rule hides this one and Argo CD is OutOfSync on it"

// syncsServerSide: Argo CD syncs desired with a server-side apply, by
// the Application's sync option or the object's own annotation
// (gitops-engine pkg/sync/sync_context.go shouldUseServerSideApply, whose
// per-object ServerSideApply=false annotation is not read here).
func syncsServerSide(app *Application, desired *unstructured.Unstructured) bool {
	return app.HasSyncOption("ServerSideApply=true") ||
		hasAnnotationOption(desired.GetAnnotations(), AnnotationSyncOptions, "ServerSideApply=true")
}

const migratedPrunes = "with ServerSideApply=true Argo CD syncs with kubectl apply --server-side as argocd-controller, which hands the fields of the client-side apply that wrote last-applied-configuration to argocd-controller (kubectl migrateToSSAIfNecessary) and applies again, so the apply prunes them where Git no longer has them"

// serverSideSyncResult is the object a ServerSideApply=true sync leaves.
// gitops-engine runs kubectl apply --server-side as argocd-controller,
// which, after its apply, moves the fields of every Update manager that
// owns last-applied-configuration into argocd-controller's Apply entry
// and applies again (k8s.io/kubectl pkg/cmd/apply/apply.go
// migrateToSSAIfNecessary, client-go util/csaupgrade
// UpgradeManagedFields): what those managers set that Git no longer has
// is pruned (differential seed 50880: a Service's selector key Git
// dropped, set by the first sync, which was client-side). When
// kubectl-client-side-apply has fields, gitops-engine's client-side apply
// migration step runs first and that manager then owns the annotation
// (csaMigrates); what its 3-way patch deletes syncPrunes says.
func serverSideSyncResult(cfg *compareConfig, live, target, migrated *unstructured.Unstructured, app *Application) (*unstructured.Unstructured, error) {
	stored := live.DeepCopy()
	names := sets.New[string]()
	if csaMigrates(live, app) {
		// gitops-engine's migration step first applies the target
		// client-side as that manager (performClientSideApplyMigration):
		// kubectl's 3-way patch from the live last-applied-configuration
		// (migrated, the client-side sync's result; nil when it cannot
		// be computed), which deletes a whole map the old manifest had
		// and Git has not, members other managers set included
		// (differential seed 67202: a person's kubectl apply of a label,
		// whose manifest had labels and Git none; self-heal deleted
		// kubectl label's part-of too).
		if migrated != nil {
			stored = migrated.DeepCopy()
			stored.SetManagedFields(live.GetManagedFields())
		}
		names.Insert(csaMigrationManager(app))
	} else {
		lastApplied := smdfieldpath.NewSet(smdfieldpath.MakePathOrDie("metadata", "annotations", LastAppliedAnnotation))
		for _, e := range csaupgrade.FindFieldsOwners(stored.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, lastApplied) {
			names.Insert(e.Manager)
		}
	}
	if names.Len() > 0 {
		if err := csaupgrade.UpgradeManagedFields(stored, names, SSAManager); err != nil {
			return nil, fmt.Errorf("client-side apply managers to %s: %w", SSAManager, err)
		}
	}
	return cfg.localApply(stored, target, SSAManager)
}
