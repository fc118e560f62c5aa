package flux

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/kube"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// requiredItemFields are fields of list items that the API server's
// validation requires (k8s.io/kubernetes pkg/apis/core/validation
// validation.go: validateContainerCommon `image` and `name`, validateEnv
// `name`, validateContainerPorts `containerPort`, validateVolumeMounts
// `name`/`mountPath`, validateVolumes `name`, ValidateService ports
// `port`), by the name of their list. An item that loses one of them and
// survives otherwise makes the whole write Invalid.
var requiredItemFields = map[string][]string{
	"containers":          {"name", "image"},
	"initContainers":      {"name", "image"},
	"ephemeralContainers": {"name", "image"},
	"env":                 {"name"},
	"ports":               {"containerPort", "port"},
	"volumeMounts":        {"name", "mountPath"},
	"volumes":             {"name"},
}

// applyFailure is why kustomize-controller's next apply of the object
// fails, found before the verdicts are given.
type applyFailure struct {
	cause string
	// beforeCleanup: the dry-run apply itself fails, so the managedFields
	// and metadata cleanup (which runs after it) does not happen either.
	beforeCleanup bool
	// forced: force is on, so the controller deletes and recreates the
	// object instead of failing (judgment.forcedVerdict).
	forced bool
	// creationFails: the manifest is rejected on creation too (a required
	// field left out), so a forced re-creation fails as well.
	creationFails bool
	// adopted are the ignored paths whose adoption into the apply makes
	// it fail: their rule is the cause, not what keeps them.
	adopted []string
	// handedOver: the apply fails on a field the managedFields cleanup
	// handed to kustomize-controller. The cleanup is a patch of its own
	// and stays, so from the next reconcile on the dry-run apply itself
	// fails the same way, and force acts on that (forceAfterHandover).
	handedOver bool
}

// immutableRejected, with -f: the manifest writes a value the kind makes
// immutable (a Deployment's selector, a RoleBinding's roleRef, a Job's
// completions) or a StatefulSet field an update may not change; the API
// server rejects kustomize-controller's dry-run apply ("field is
// immutable"), the Kustomization turns Ready=False and nothing changes,
// unless force is on, which re-creates the object (ssa/errors
// IsImmutableError, manager_apply.go). --server-dry-run asks the API
// server; here the manifest's values outside lists are written over live
// (kube.Applied: an apply sets them as Git has them; lists are left out,
// whose items the apply merges by key with fields other managers own)
// and the kind's update validation runs on the result
// (kube.UpdateRejections), keeping only its immutability errors, which
// depend on the written value alone and not on what else the apply
// prunes.
func (j *judgment) immutableRejected() *applyFailure {
	if j.desired == nil || j.normDesired == nil || j.live == nil {
		return nil
	}
	sets, _ := withoutLists(j.normDesired.Object).(map[string]any)
	// The server keeps its own metadata (name, uid, creationTimestamp...)
	// and status out of an apply; labels and annotations are written.
	delete(sets, "status")
	meta, _ := sets["metadata"].(map[string]any)
	kept := map[string]any{}
	for _, k := range []string{"labels", "annotations"} {
		if v, ok := meta[k]; ok {
			kept[k] = v
		}
	}
	sets["metadata"] = kept
	rejections, ok := kube.UpdateRejections(j.live, kube.Applied(j.live, nil, sets))
	if !ok {
		return nil
	}
	var immutable []string
	for _, r := range rejections {
		if strings.Contains(r, "immutable") || strings.Contains(r, "are forbidden") {
			immutable = append(immutable, r)
		}
	}
	if len(immutable) == 0 {
		return nil
	}
	return &applyFailure{beforeCleanup: true,
		cause: "the server-side dry-run apply as kustomize-controller fails: the API server's update validation of " + j.live.GetKind() + " rejects the manifest's value (" + strings.Join(immutable, "; ") + "); --server-dry-run asks the API server"}
}

// forceAfterHandover: the apply after the managedFields cleanup fails
// (f.handedOver) and force is on. The first reconcile's dry-run passed, so
// force does not act then; the cleanup stays, the next dry-run apply fails
// the same way (Invalid), and force deletes the object and applies the
// manifest anew (fluxcd/pkg ssa manager_apply.go ApplyAll: shouldForceApply
// on a failed dryRunApply, Delete, dryRunApply again), which the API server
// rejects too when the manifest lacks a field it requires (make
// differential seed 71526: Git dropped a Backup's required schedule that
// kubectl edit had set; after the reconciles the Backup was gone, the
// tool had said apply-fails).
func (a *Adapter) forceAfterHandover(ctx context.Context, j *judgment, f *applyFailure) {
	f.forced = true
	f.cause += "; the cleanup stays, so from the next reconcile on the dry-run apply fails the same way"
	f.creationFails = a.rejectedOnCreate(ctx, j)
}

// rejectedOnCreate says whether the API server rejects the manifest as a
// new object: a custom resource against its CRD's schema (a required
// field left out, with no default), a built-in kind by requiredLeftOut.
func (a *Adapter) rejectedOnCreate(ctx context.Context, j *judgment) bool {
	if j.desired == nil {
		return false
	}
	if root := a.crdSchema(ctx, j.desired.GroupVersionKind()); root != nil {
		return schemaMissingRequired(root, j.desired.Object, "") != ""
	}
	return j.requiredLeftOut() != nil
}

// withoutLists is v without its list values (maps keep their other
// members).
func withoutLists(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, c := range t {
			if _, isList := c.([]any); isList {
				continue
			}
			out[k] = withoutLists(c)
		}
		return out
	case []any:
		return nil
	}
	return v
}

// cleanupRemoval is a field kustomize-controller's next apply removes
// while it keeps the list item around it.
type cleanupRemoval struct {
	pointer, fieldPath, field string
	owners                    []model.ManagerRef
}

// predictApplyFailure decides whether kustomize-controller's next apply of
// the object fails. Measured (e2e TestFluxConformance, webhook-sidecar-edited):
// a mutating webhook injects a sidecar container, whose fields nobody owns
// (admission changes are not attributed); `kubectl edit` of its image makes
// kubectl-edit own `image`; the managedFields cleanup hands that entry to
// kustomize-controller (fluxcd/pkg ssa patch.go PatchReplaceFieldsManagers),
// whose apply then drops `image` (not in the manifest) but keeps the rest of
// the item (owned by nobody), the webhook leaves an existing sidecar alone,
// and the API server rejects it: `containers[1].image: Required value`. The
// Kustomization turns Ready=False, every object of it stays as it is, and
// from then on the dry-run apply fails the same way, before any cleanup.
//
//   - with --server-dry-run: a failed dry-run apply as kustomize-controller
//     is the controller's own failure; otherwise the removals the cleanup
//     leads to are dry-run as a JSON patch as kustomize-controller (the API
//     server runs the webhooks and validation on it);
//   - with -f or inferred: a removal that leaves a surviving list item
//     without a field validation requires (requiredItemFields).
func (a *Adapter) predictApplyFailure(ctx context.Context, j *judgment, dryRunErr error, rep *model.Report) *applyFailure {
	// An object the controller skips (suspended, reconcile disabled, ssa
	// Ignore or IfNotPresent) never gets here: predictFailure asks its
	// marks first.
	if j.helm || j.live == nil || len(j.badRules) > 0 {
		return nil
	}
	if dryRunErr != nil {
		if apierrors.IsInvalid(dryRunErr) {
			// Only an immutable field is fixed by re-creating the object;
			// anything else the API server rejects on creation too.
			return &applyFailure{beforeCleanup: true, creationFails: !strings.Contains(dryRunErr.Error(), "immutable"),
				cause: "the server-side dry-run apply as kustomize-controller fails: " + dryRunErr.Error()}
		}
		return nil
	}
	if a.serverDryRun && j.merged != nil {
		if f := a.dryRunHandover(ctx, j, rep); f != nil {
			return f
		}
	} else if f := j.immutableRejected(); f != nil {
		return f
	} else if f := a.schemaRequiredHandover(ctx, j); f != nil {
		return f
	} else if f := a.schemaRequiredDropped(ctx, j, rep); f != nil {
		return f
	}
	removals := j.cleanupRemovals()
	if len(removals) == 0 {
		return nil
	}
	if a.serverDryRun && j.merged != nil {
		err := a.dryRunRemove(ctx, j.live, removals)
		if err == nil {
			// The API server accepts the object without them (a webhook
			// puts them back, or validation does not require them).
			return nil
		}
		if !isValidationError(err) {
			rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "dry-run-failed",
				Message: fmt.Sprintf("the server-side dry-run of removing %s as kustomize-controller failed: %v; whether the next apply fails is not known", removalList(removals), err)})
			return nil
		}
		return &applyFailure{handedOver: true, cause: fmt.Sprintf("the managedFields cleanup hands %s to kustomize-controller, whose apply removes it (not in the manifest); a server-side dry-run of that removal as kustomize-controller fails: %v",
			removalList(removals), err)}
	}
	r := removals[0]
	return &applyFailure{handedOver: true, cause: fmt.Sprintf("the managedFields cleanup hands %s (set by %s) to kustomize-controller, whose apply removes it (not in the manifest) but keeps the rest of that list item, which the manifest does not own: the API server rejects an item without its required %q (Invalid, as `%s: Required value`); --server-dry-run checks it with the API server",
		r.fieldPath, managerList(r.owners), r.field, strings.TrimPrefix(r.fieldPath, "."))}
}

func removalList(rs []cleanupRemoval) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.fieldPath + " (set by " + managerList(r.owners) + ")"
	}
	return strings.Join(parts, ", ")
}

// cleanupRemovals lists the required fields of list items that the next
// apply removes while it keeps the item: every owner of the field is a
// manager the cleanup hands over (or kustomize-controller itself, -f only),
// the manifest does not set it, and some other field of the item stays.
func (j *judgment) cleanupRemovals() []cleanupRemoval {
	if j.ix == nil || j.ssaValue == ssaMerge {
		return nil
	}
	var out []cleanupRemoval
	for _, leaf := range j.ix.Leaves(j.live) {
		tokens, err := jsonpointer.Parse(leaf.Pointer)
		if err != nil || len(tokens) < 3 {
			continue
		}
		n := len(tokens)
		field, list := tokens[n-1], tokens[n-3]
		if _, isIndex := strconv.Atoi(tokens[n-2]); isIndex != nil || !contains(requiredItemFields[list], field) {
			continue
		}
		if !j.removedByApply(leaf.Pointer, leaf.Owners) {
			continue
		}
		item := jsonpointer.Join(tokens[:n-1]...)
		if j.inDesired(item) || !j.foreignItem(tokens[:n-2], item, field) || !j.itemSurvives(item, field) {
			continue
		}
		out = append(out, cleanupRemoval{pointer: leaf.Pointer, fieldPath: leaf.FieldPath, field: field, owners: leaf.Owners})
	}
	return out
}

// removedByApply: the next apply removes the live field at pointer.
func (j *judgment) removedByApply(pointer string, owners []model.ManagerRef) bool {
	if len(owners) == 0 || j.inDesired(pointer) {
		return false
	}
	cleaned := false
	for _, m := range owners {
		switch {
		case m.Manager == KustomizeManager && m.Operation == "Apply" && m.Subresource == "":
			if j.desired == nil {
				// Inferred: kustomize-controller's Apply entry owns what
				// its manifest sets.
				return false
			}
		case cleanedUpBy(m.Manager, m.Operation, m.Subresource) != nil:
			cleaned = true
		default:
			return false
		}
	}
	return cleaned || j.desired != nil
}

// inDesired: the manifest sets the field (lists paired by merge keys);
// inferred, kustomize-controller's Apply entry owns it.
func (j *judgment) inDesired(pointer string) bool {
	if j.desired != nil {
		_, ok := j.lookupKeyed(j.desired.Object, pointer)
		return ok
	}
	for _, m := range j.ix.Owners(j.live, pointer) {
		if m.Manager == KustomizeManager && m.Operation == "Apply" && m.Subresource == "" {
			return true
		}
	}
	return false
}

// foreignItem: the item is keyed (an associative list) and its keys were
// not written by kustomize-controller's apply nor go with the removal, so
// server-side apply cannot drop the item as a whole: it was added by
// someone else (a webhook, an operator).
func (j *judgment) foreignItem(listTokens []string, item, field string) bool {
	lt := j.ix.ListType(j.live, jsonpointer.Join(listTokens...))
	if lt.Kind != managedfields.ListMap || len(lt.Keys) == 0 {
		return false
	}
	for _, k := range lt.Keys {
		if k == field {
			return false
		}
		p := item + "/" + jsonpointer.Escape(k)
		owners := j.ix.Owners(j.live, p)
		if j.removedByApply(p, owners) {
			return false
		}
		for _, m := range owners {
			if m.Manager == KustomizeManager && m.Operation == "Apply" {
				return false
			}
		}
	}
	return true
}

// itemSurvives: some other field of the live list item stays after the
// apply (nobody owns it, e.g. injected by a webhook, or a manager the
// cleanup does not touch does), so server-side apply keeps the item.
func (j *judgment) itemSurvives(item, removed string) bool {
	v, ok := jsonpointer.Get(j.live.Object, item)
	m, isMap := v.(map[string]any)
	if !ok || !isMap {
		return false
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		if k == removed {
			continue
		}
		p := item + "/" + jsonpointer.Escape(k)
		if !j.removedByApply(p, j.ix.Owners(j.live, p)) {
			return true
		}
	}
	return false
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// dryRunRemove sends the removals as a JSON patch with dryRun=All as
// kustomize-controller (jsonPatchDryRun): the API server runs its
// admission webhooks and validation on the result. Only fields of items
// that stay are removed, never list items, so no removal shifts another's
// pointer.
func (a *Adapter) dryRunRemove(ctx context.Context, live *unstructured.Unstructured, rs []cleanupRemoval) error {
	ptrs := make([]string, len(rs))
	for i, r := range rs {
		ptrs[i] = r.pointer
	}
	_, err := a.patchRunner(ctx, live, removeOps(ptrs))
	return err
}

// objectPointer names the whole object (RFC 6901: the empty pointer).
const objectPointer = ""

// addDeleted lists the object itself when kustomize-controller's forced
// apply deletes it and its re-creation is rejected the same way
// (forcedVerdict, creationFails): every field goes, apiVersion and kind
// included, not only the drifted ones (measured, make differential seeds
// 6146, 6175, 6288, 40166: after the reconciles the object is gone; the
// tool had named only its drifted fields).
func (j *judgment) addDeleted(rep *model.Report, f *applyFailure) {
	if f == nil || !f.forced || !f.creationFails || j.live == nil {
		return
	}
	rep.Drifts = append(rep.Drifts, model.FieldDrift{Path: objectPointer, FieldPath: "(the whole object)", Change: model.Changed,
		Cause: model.CauseUnknown, Verdicts: []model.Verdict{{Engine: Engine, Kind: model.ApplyFails,
			Reason: j.caveat(f.cause + "; force is enabled, so kustomize-controller deletes the object first and its re-creation is rejected the same way: the whole object is deleted until Git is fixed")}}})
}
