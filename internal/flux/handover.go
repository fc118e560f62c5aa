package flux

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/kube"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// handover is what kustomize-controller's apply does after its
// managedFields cleanup, as the API server answers it (--server-dry-run).
// fluxcd/pkg ssa manager_apply.go ApplyAll runs the dry-run apply first,
// then cleanupMetadata (patch.go PatchReplaceFieldsManagers merges the
// kubectl and before-first-apply entries into kustomize-controller's), then
// the real apply: a field only those managers own, which the manifest does
// not set, is then removed by the apply, and the API server defaults,
// validates or rejects the result. The dry-run apply the tool sends runs
// before that cleanup, like the controller's, so it keeps those fields: it
// cannot answer for them (make differential seeds 20008: a Backup's
// required schedule, the apply fails; 6108: an HPA's minReplicas 1, the
// server defaults it back).
type handover struct {
	// pointers are the live fields the apply after the cleanup removes.
	pointers []string
	// result is the live object with them removed, as the API server
	// returns it from a dry-run (defaults filled in); nil when it failed.
	result *unstructured.Unstructured
	// computed: result was computed here (-f, no dry-run: computeHandover),
	// not returned by the API server.
	computed bool
}

// computeHandover is handover's result without the API server (-f): the
// live object with the manifest applied over it and the fields handedOver
// removed (ownership after the apply), then defaulted as the API server
// defaults every write (kube.Stored). A field the server derives from
// another that some other manager keeps comes back with the same value
// (make differential seed 42657, class R15: kubectl-patch's
// sessionAffinityConfig is dropped, argocd-controller's Apply keeps
// sessionAffinity ClientIP, and SetDefaults_Service fills the same
// timeoutSeconds again). Only that answer is read from it
// (handoverVerdict): the server may do more than default (allocate,
// keep an old nodePort), which is not computed here.
//
// Inferred mode (no manifest) computes it too, with kustomize-controller's
// fields as the live object has them: whether the manifest changes a field
// the value comes from is not known there (handoverVerdict says unknown).
func (j *judgment) computeHandover() {
	if j.helm || j.handover != nil || j.merged != nil || j.live == nil || j.desired != nil && j.normDesired == nil {
		return
	}
	ptrs := j.handedOver()
	if len(ptrs) == 0 {
		return
	}
	var sets map[string]any
	if j.normDesired != nil {
		sets = j.normDesired.Object
	}
	if res, ok := kube.Stored(kube.Applied(j.live, ptrs, sets)); ok {
		j.handover = &handover{pointers: ptrs, result: res, computed: true}
	}
}

// handedOver lists the live fields the cleanup hands to kustomize-controller
// and its apply then removes: every owner is a manager the cleanup catches
// (or kustomize-controller's own Apply entry), at least one is, and the
// manifest does not set the field (inferred: kustomize-controller does not
// own it, removedByApply). Fields inside list items are left to
// cleanupRemovals: server-side apply drops a whole item whose fields all go,
// which a field-by-field removal does not show. What the same cleanup
// deletes (cleanupDeletes: kubectl's last-applied-configuration...) is not
// handed over, so no later apply has it to remove (make differential seed
// 73332: read as handed over, the annotation made every reconcile apply
// the object, and an ignored path's adopted null fail every time; the
// second reconcile applied nothing and was Ready).
func (j *judgment) handedOver() []string {
	if j.ix == nil || j.live == nil || j.ssaValue == ssaMerge {
		return nil
	}
	var out []string
	for _, leaf := range j.ix.Leaves(j.live) {
		if strings.HasPrefix(leaf.Pointer, "/metadata/") && !strings.HasPrefix(leaf.Pointer, "/metadata/labels/") &&
			!strings.HasPrefix(leaf.Pointer, "/metadata/annotations/") || leaf.Pointer == "/status" || strings.HasPrefix(leaf.Pointer, "/status/") ||
			slices.Contains(cleanupDeletes, leaf.Pointer) {
			continue
		}
		cleaned := false
		for _, m := range leaf.Owners {
			if cleanedUpBy(m.Manager, m.Operation, m.Subresource) != nil {
				cleaned = true
			}
		}
		if !cleaned || !j.removedByApply(leaf.Pointer, leaf.Owners) || throughList(j.live.Object, leaf.Pointer) {
			continue
		}
		out = append(out, leaf.Pointer)
	}
	return out
}

// cleanupDeletes are the metadata kustomize-controller's managedFields
// cleanup deletes before its apply (kustomize-controller v1.9.6
// internal/controller/kustomization_controller.go, ApplyCleanupOptions
// Annotations and Labels): kubectl's client-side apply record and Flux
// v1's checksums and garbage-collection mark.
var cleanupDeletes = []string{
	diff.LastAppliedPointer,
	"/metadata/annotations/kustomize.toolkit.fluxcd.io~1checksum",
	"/metadata/annotations/fluxcd.io~1sync-checksum",
	"/metadata/labels/fluxcd.io~1sync-gc-mark",
}

// throughList says whether pointer passes through a list in obj.
func throughList(obj map[string]any, pointer string) bool {
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return true
	}
	var cur any = obj
	for _, t := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[t]
		case []any:
			return true
		default:
			return false
		}
	}
	return false
}

// dryRunHandover asks the API server what the apply after the cleanup
// leaves: the removals of handedOver as one dry-run JSON patch as
// kustomize-controller. A rejection (Invalid) is the apply's failure:
// the cleanup has run, the apply fails, the Kustomization turns
// Ready=False and the fields stay.
func (a *Adapter) dryRunHandover(ctx context.Context, j *judgment, rep *model.Report) *applyFailure {
	ptrs := j.handedOver()
	if len(ptrs) == 0 {
		return nil
	}
	res, err := a.patchRunner(ctx, j.live, removeOps(ptrs))
	switch {
	case err == nil:
		j.handover = &handover{pointers: ptrs, result: res}
		return nil
	case isValidationError(err):
		return &applyFailure{handedOver: true, cause: fmt.Sprintf("the managedFields cleanup hands %s to kustomize-controller, whose apply removes it (not in the manifest); a server-side dry-run of that removal as kustomize-controller fails: %v",
			strings.Join(ptrs, ", "), err)}
	default:
		rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "dry-run-failed",
			Message: fmt.Sprintf("the server-side dry-run of removing %s as kustomize-controller (its apply after the managedFields cleanup) failed: %v; the verdicts of these fields come from field ownership", strings.Join(ptrs, ", "), err)})
		return nil
	}
}

// isValidationError: the API server rejected the object itself (Invalid
// with the kind it validated), not the patch (a failed JSON patch
// operation is a 422 too, without a kind).
func isValidationError(err error) bool {
	var se apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &se) {
		return false
	}
	d := se.Status().Details
	return d != nil && d.Kind != ""
}

// removeOps is a JSON patch removing ptrs, guarded by nothing: the caller
// adds the resourceVersion test.
func removeOps(ptrs []string) []map[string]any {
	ops := make([]map[string]any, 0, len(ptrs))
	for _, p := range ptrs {
		ops = append(ops, map[string]any{"op": "remove", "path": p})
	}
	return ops
}

// handoverVerdict is the verdict of a drifted field the apply after the
// cleanup removes, read from the dry-run's result: the value it returns
// (an API-server default) against the live one.
func (j *judgment) handoverVerdict(d *model.FieldDrift, cleaned []model.ManagerRef) (model.Verdict, bool) {
	h := j.handover
	if h == nil || h.result == nil {
		return model.Verdict{}, false
	}
	related := false
	for _, p := range h.pointers {
		if p == d.Path || strings.HasPrefix(p, d.Path+"/") || strings.HasPrefix(d.Path, p+"/") {
			related = true
			break
		}
	}
	if !related {
		return model.Verdict{}, false
	}
	lv, lok := jsonpointer.Get(j.live.Object, d.Path)
	rv, rok := jsonpointer.Get(h.result.Object, d.Path)
	same := lok && rok && apiequality.Semantic.DeepEqual(diff.NormalizeNumber(lv), diff.NormalizeNumber(rv))
	if h.computed {
		if !same {
			return model.Verdict{}, false
		}
		if j.desired == nil {
			return model.Verdict{Kind: model.Unknown, Reason: fmt.Sprintf(
				"set by %s: the managedFields cleanup hands it to kustomize-controller, whose apply drops it, and the API server's defaulting (kubernetes pkg/apis/*/v1 defaults.go) gives the same value back from the fields the object keeps, unless the manifest changes one of them (a field it sets that another writer changed no longer shows as kustomize-controller's): give -f FILE to know", managerList(cleaned))}, true
		}
		return model.Verdict{Kind: model.LeftAlone, Reason: fmt.Sprintf(
			"set by %s: the managedFields cleanup hands it to kustomize-controller, whose apply drops it (not in the manifest), but the API server's defaulting of the object that apply leaves (kubernetes pkg/apis/*/v1 defaults.go) gives the same value back: nothing changes", managerList(cleaned))}, true
	}
	if same {
		return model.Verdict{Kind: model.LeftAlone, Reason: fmt.Sprintf(
			"set by %s: the managedFields cleanup hands it to kustomize-controller, whose apply drops it (not in the manifest), but a server-side dry-run of that removal as kustomize-controller gets the same value back (an API-server default): nothing changes", managerList(cleaned))}, true
	}
	what := "removes it"
	if rok {
		what = fmt.Sprintf("sets it to %v", rv)
	}
	return model.Verdict{Kind: model.Reverted, Reason: j.caveat(fmt.Sprintf(
		"set by %s: the managedFields cleanup hands it to kustomize-controller, whose apply drops it (not in the manifest); a server-side dry-run of that removal as kustomize-controller %s %s", managerList(cleaned), what, j.every()))}, true
}

// jsonPatchDryRun sends ops as a JSON patch with dryRun=All as
// kustomize-controller, guarded by the live resourceVersion, and returns
// the object the API server would store (after its admission webhooks,
// defaulting and validation). Nothing is written.
func (a *Adapter) jsonPatchDryRun(ctx context.Context, live *unstructured.Unstructured, ops []map[string]any) (*unstructured.Unstructured, error) {
	c, err := a.kubeClient()
	if err != nil {
		return nil, err
	}
	all := append([]map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": live.GetResourceVersion()}}, ops...)
	raw, err := json.Marshal(all)
	if err != nil {
		return nil, err
	}
	obj := live.DeepCopy()
	if err := c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, raw), client.DryRunAll, client.FieldOwner(KustomizeManager)); err != nil {
		return nil, err
	}
	return obj, nil
}
