package argocd

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
// Without a schema for the kind the apply cannot be computed and the
// verdicts stay.
func serverSideSyncKeeps(rep *model.Report, live *unstructured.Unstructured, cmp *comparison, app *Application) {
	if cmp == nil || cmp.cfg == nil || cmp.desired == nil || cmp.fromLastApplied || app == nil || live == nil {
		return
	}
	if !app.HasSyncOption("ServerSideApply=true") &&
		!hasAnnotationOption(cmp.desired.GetAnnotations(), AnnotationSyncOptions, "ServerSideApply=true") {
		return
	}
	if cmp.cfg.parser == nil || cmp.cfg.parser.Type(live.GroupVersionKind()) == nil {
		return
	}
	var after *unstructured.Unstructured
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		v := verdictOf(*d, Engine)
		if v == nil || v.Kind != model.Reverted {
			continue
		}
		if after == nil {
			var err error
			if after, err = cmp.cfg.localApply(live, cmp.desired, SSAManager); err != nil {
				return
			}
		}
		lv, inLive := jsonpointer.Get(live.Object, d.Path)
		av, inAfter := jsonpointer.Get(after.Object, d.Path)
		if !inLive || !inAfter || !jsonEqual(lv, av) {
			continue
		}
		nv := *v
		nv.Kind = model.Reported
		nv.Reason = "OutOfSync; " + ServerSetsAgainPhrase
		d.SetVerdict(nv)
	}
}
