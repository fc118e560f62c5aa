package argocd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/kube"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// syncFails: Argo CD's sync of an OutOfSync object (selfHeal's too)
// writes one object (a client-side kubectl apply of Git's manifest,
// gitops-engine pkg/utils/kube/resource_ops.go ApplyResource, or with
// ServerSideApply=true a server-side apply as argocd-controller,
// serverSideSync). When the API server rejects that object (422
// Invalid), gitops-engine marks the task SyncFailed and the operation
// Failed, and an automated sync retries the same write (Retry{Limit: 5}
// by default, argo-cd controller/appcontroller.go autoSync) with the same
// answer: the sync changes nothing and the object stays OutOfSync. So no
// field is written back: reverted becomes reported, and the phrases
// saying a sync deletes or re-applies a field are taken back. Two
// computations say the server rejects it: a field the kind's schema
// requires that the write leaves out (syncMissesRequired), and the kind's
// update validation (syncRejected).
func (a *Adapter) syncFails(rep *model.Report, live, desired *unstructured.Unstructured, sync *clientSideSync, after *unstructured.Unstructured, app *Application) {
	if sync == nil {
		return // no desired state or Application (newClientSideSync)
	}
	if replacesOrForces(app, desired) {
		// The write is another one: kubectl replace puts Git's manifest
		// whole, and a forced apply deletes and re-creates an object the
		// server rejects (gitops-engine pkg/sync/sync_context.go
		// applyObject; k8s.io/kubectl apply patcher deleteAndCreate).
		// Neither is computed here.
		return
	}
	why, what := a.syncMissesRequired(rep, live, desired, sync, after, app)
	if why == "" {
		why, what = syncRejected(live, desired, sync, after, app)
	}
	if why == "" {
		return
	}
	why = "a sync fails: " + why + ", so the server rejects the object and the sync changes nothing"
	rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "sync-fails", Message: why})
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		v := verdictOf(*d, Engine)
		if v == nil {
			continue
		}
		nv := *v
		switch {
		case v.Kind == model.Reverted:
			// The answer first (the text output cuts reasons to three
			// lines), the cause once, in the note.
			nv.Kind = model.Reported
			nv.Reason = fmt.Sprintf(syncFailsPhrase, what)
		case strings.Contains(v.Reason, SyncDeletesPhrase), strings.Contains(v.Reason, SyncReappliesPhrase):
			nv.Reason = strings.NewReplacer(SyncDeletesPhrase, "a sync would delete it", SyncReappliesPhrase, "a sync would re-apply Git's value").Replace(v.Reason) + "; but every sync fails (" + what + ")"
		default:
			continue
		}
		d.SetVerdict(nv)
	}
}

// replacesOrForces: Argo CD syncs desired with kubectl replace
// (Replace=true, the Application's sync option or the object's) or with
// kubectl's --force (Force=true on the object; an automated sync's
// operation sets no force of its own: argo-cd controller/sync.go
// SyncStrategy.Force).
func replacesOrForces(app *Application, desired *unstructured.Unstructured) bool {
	ann := desired.GetAnnotations()
	return app.HasSyncOption("Replace=true") || hasAnnotationOption(ann, AnnotationSyncOptions, "Replace=true") ||
		hasAnnotationOption(ann, AnnotationSyncOptions, "Force=true")
}

// syncFailsPhrase is the reason of a field a sync would revert when
// every sync fails, with what the API server rejects (the note says how).
const syncFailsPhrase = "OutOfSync, and it stays so: every sync fails (%s), and an automated sync retries it with the same answer"

// syncRejected says why the API server's update validation rejects the
// object the sync writes over live (kube.UpdateRejections): after, a
// server-side sync's, or the client-side sync's result. Differential seed
// 64984 (A38, Argo CD v3.2.11): a Job created by a client-side sync
// (argocd-controller's Update owns the defaulted spec.completions), in a
// ServerSideApply=true app; the server-side sync's migration hands those
// fields to argocd-controller's apply, which prunes completions now that
// Git sets parallelism (so the default no longer writes it), and every
// self-heal sync failed with "spec.completions: Invalid value: null:
// field is immutable". "" when it is accepted or the kind's validation is
// not known here.
func syncRejected(live, desired *unstructured.Unstructured, sync *clientSideSync, after *unstructured.Unstructured, app *Application) (why, what string) {
	type write struct {
		obj *unstructured.Unstructured
		how string
	}
	var writes []write
	ssa := syncsServerSide(app, desired)
	if (!ssa || csaMigrates(live, app)) && sync.computed() {
		how := "the object it writes (kubectl's 3-way patch applied to live)"
		if ssa {
			how = "the object its client-side apply migration writes (ServerSideApply=true, kubectl-client-side-apply owns fields; kubectl's 3-way patch applied to live)"
		}
		writes = append(writes, write{sync.result, how})
	}
	if ssa && after != nil {
		writes = append(writes, write{after, "the object its server-side apply writes (the apply as argocd-controller prunes what that manager set, itself or by taking over its client-side sync's fields, and Git no longer sets)"})
	}
	for _, w := range writes {
		if rejections, ok := kube.UpdateRejections(live, w.obj); ok && len(rejections) > 0 {
			what = "the API server rejects " + strings.Join(rejections, "; ")
			return fmt.Sprintf("%s is one the API server's update validation of %s rejects (%s)", w.how, live.GetKind(), strings.Join(rejections, "; ")), what
		}
	}
	return "", ""
}

// syncMissesRequired says why the object a client-side sync writes lacks
// a field the API server requires: its 3-way patch deletes every field
// the live last-applied-configuration lists and the manifest does not
// (syncPrunes), and when such a field is one the kind's OpenAPI schema
// lists in its parent's required, the server rejects the patched object.
// Seen on Argo CD v3.2.11, differential seed 20089: Git drops a CronJob's
// spec.schedule, Argo CD shows /spec/schedule and every self-heal attempt
// fails with "spec.schedule: Required value". Needs the cluster's schema
// (SchemaFunc); without it "" (the verdicts stay as the diff gave them).
func (a *Adapter) syncMissesRequired(rep *model.Report, live, desired *unstructured.Unstructured, sync *clientSideSync, after *unstructured.Unstructured, app *Application) (why, what string) {
	// A ServerSideApply=true sync applies client-side first when a
	// person's kubectl apply left kubectl-client-side-apply's fields
	// (csaMigrates): that migration's 3-way patch fails the same way, and
	// the sync with it (differential seed 61921: Git drops an
	// IngressClass's required parameters.name; "Failed to perform
	// client-side apply migration ... spec.parameters.name: Required
	// value" on every self-heal).
	if a.opts.Schema == nil {
		return "", ""
	}
	ssa := syncsServerSide(app, desired)
	if ssa && !csaMigrates(live, app) {
		return a.serverSideSyncMisses(live, after)
	}
	gvk := live.GroupVersionKind()
	// A built-in kind's published defaults are its Go zero values
	// (openapi-gen writes "default": "" for a required string), which the
	// API server does not apply; a custom resource's structural defaults
	// it applies before validating.
	structural := !scheme.Scheme.Recognizes(gvk)
	deleted := syncDeleted(rep, live, desired, app)
	var result *unstructured.Unstructured
	if len(deleted) == 0 {
		// Only a sync that deletes a field or writes a new parent can
		// leave a required field out: the schema (one more read) is
		// asked for nothing else.
		// A built-in kind's result went through its Go types and
		// defaulting, which add parents of their own (resources: {}, a
		// default strategy): only what it drops counts there.
		if !sync.computed() || !reshapes(live.Object, sync.result.Object, structural) {
			return "", ""
		}
		result = sync.result
	}
	models, root, ok := a.kindSchema(gvk)
	if !ok {
		return "", ""
	}
	var missing []string
	for _, p := range deleted {
		if requiredField(models, models[root], p, structural) && parentStays(p, deleted, desired) {
			missing = append(missing, p)
		}
	}
	how := "its 3-way patch deletes"
	if result != nil {
		missing = syncResultMisses(result, live, models, models[root], structural)
		how = "the object it writes (kubectl's 3-way patch applied to live) lacks"
	}
	if len(missing) == 0 {
		return "", ""
	}
	if ssa {
		how = "its client-side apply migration (ServerSideApply=true, kubectl-client-side-apply owns fields) runs kubectl's 3-way patch, which deletes"
	}
	return missesRequired(how, missing, gvk.Kind)
}

// missesRequired is why and what of a write that lacks required fields
// (missing), how naming the write.
func missesRequired(how string, missing []string, kind string) (why, what string) {
	list := strings.Join(missing, ", ")
	return fmt.Sprintf("%s %s, which the API server requires (OpenAPI schema of %s)", how, list, kind),
		"the object it writes lacks " + list + ", which the API server requires"
}

// serverSideSyncMisses: the object a server-side sync writes (after,
// serverSideSync) lacks a field a custom resource's schema requires: the
// apply as argocd-controller pruned it (its own, or taken over from the
// client-side sync by kubectl's migration) and Git no longer sets it.
// Differential seed 66810 (Argo CD v3.2.11): Git drops a Backup's
// required schedule in a ServerSideApply=true app; every self-heal sync
// failed with "spec.schedule: Required value". A built-in kind's is
// kube.UpdateRejections' (syncRejected).
func (a *Adapter) serverSideSyncMisses(live, after *unstructured.Unstructured) (why, what string) {
	gvk := live.GroupVersionKind()
	if after == nil || scheme.Scheme.Recognizes(gvk) || !reshapes(live.Object, after.Object, true) {
		return "", ""
	}
	models, root, ok := a.kindSchema(gvk)
	if !ok {
		return "", ""
	}
	missing := syncResultMisses(after, live, models, models[root], true)
	if len(missing) == 0 {
		return "", ""
	}
	return missesRequired("the object its server-side apply writes (the apply as argocd-controller prunes what that manager set and Git no longer sets) lacks", missing, gvk.Kind)
}

// syncDeleted are the live fields the sync's 3-way patch deletes: listed
// by last-applied-configuration, absent from the manifest, not copied
// from live into the manifest by RespectIgnoreDifferences=true (argo-cd
// controller/sync.go normalizeTargetResources does it for ignored fields).
func syncDeleted(rep *model.Report, live, desired *unstructured.Unstructured, app *Application) []string {
	orig, err := lastApplied(live)
	if err != nil || orig == nil {
		return nil
	}
	respect := app.HasSyncOption("RespectIgnoreDifferences=true")
	var out []string
	for _, d := range rep.Drifts {
		v := verdictOf(d, Engine)
		if v == nil || d.Change != model.Added || v.Kind == model.Ignored && respect ||
			pointerPresent(desired, d.Path) || !pointerPresent(orig, d.Path) || !pointerPresent(live, d.Path) {
			continue
		}
		out = append(out, d.Path)
	}
	return out
}

// syncResultMisses are the required fields the object a client-side sync
// writes (result) lacks where live has them or where the sync creates
// their parent: the API server rejects that object. Differential seed
// 57128 (A26, Argo CD v3.2.11): Git's Backup has a spec without its
// required schedule, the live one has no spec and no
// last-applied-configuration, so the patch deletes nothing and creates
// spec; every self-heal sync failed with "spec.schedule: Required value".
// A required field live lacks as well is not the sync's doing (a schema
// that changed since, or a published "required" the server does not
// enforce): it is left out.
func syncResultMisses(result, live *unstructured.Unstructured, models map[string]*spec.Schema, root *spec.Schema, structural bool) []string {
	if root == nil {
		return nil
	}
	var out []string
	requiredMisses(models, root, result.Object, live.Object, true, "", structural, &out)
	slices.Sort(out) // map order: stable output
	return out
}

// reshapes says whether the sync's result drops a field live has or, with
// newParents, adds a map or list live lacks (a new parent): only then may
// it lack a required field.
func reshapes(live, result any, newParents bool) bool {
	switch l := live.(type) {
	case map[string]any:
		r, ok := result.(map[string]any)
		if !ok {
			return result != nil
		}
		for k, lv := range l {
			rv, has := r[k]
			if !has || reshapes(lv, rv, newParents) {
				return true
			}
		}
		for k, rv := range r {
			if _, has := l[k]; !has && newParents {
				switch rv.(type) {
				case map[string]any, []any:
					return true
				}
			}
		}
	case []any:
		r, ok := result.([]any)
		if !ok || len(r) != len(l) {
			return true
		}
		for i := range l {
			if reshapes(l[i], r[i], newParents) {
				return true
			}
		}
	}
	return false
}

// requiredMisses walks node (the sync's result at pointer at) with its
// schema s, beside liveNode (live at the same pointer; liveHas says
// whether live has it), and appends the required fields node lacks that
// live has with another value or whose parent live lacks. A built-in
// kind's result went through its Go types, which write a required string
// left out as "": that counts as missing.
func requiredMisses(models map[string]*spec.Schema, s *spec.Schema, node, liveNode any, liveHas bool, at string, structural bool, out *[]string) {
	s = resolveSchema(models, s)
	switch n := node.(type) {
	case map[string]any:
		lm, _ := liveNode.(map[string]any)
		for _, k := range s.Required {
			v, has := n[k]
			if has && v != nil && (structural || v != "") {
				continue
			}
			if c, ok := s.Properties[k]; ok && structural && c.Default != nil {
				continue
			}
			if lv, lhas := lm[k]; liveHas && (!lhas || apiequality.Semantic.DeepEqual(lv, v)) {
				continue // live lacks it too: not the sync's doing
			}
			*out = append(*out, at+"/"+jsonpointer.Escape(k))
		}
		for k, v := range n {
			c := childSchema(models, s, k)
			if c == nil {
				continue
			}
			lv, lhas := lm[k]
			requiredMisses(models, c, v, lv, liveHas && lhas, at+"/"+jsonpointer.Escape(k), structural, out)
		}
	case []any:
		if s.Items == nil || s.Items.Schema == nil {
			return
		}
		ll, _ := liveNode.([]any)
		for i, v := range n {
			var lv any
			lhas := liveHas && i < len(ll)
			if lhas {
				lv = ll[i]
			}
			requiredMisses(models, s.Items.Schema, v, lv, lhas, at+"/"+strconv.Itoa(i), structural, out)
		}
	}
}

// parentStays: the object the sync writes still has p's parent (the
// manifest has it, or the patch does not delete it), so a required field
// missing there is an invalid object, not one whose parent is gone.
func parentStays(p string, deleted []string, desired *unstructured.Unstructured) bool {
	parent := p[:strings.LastIndex(p, "/")]
	if parent == "" || pointerPresent(desired, parent) {
		return true
	}
	return !slices.ContainsFunc(deleted, func(q string) bool { return covers(q, parent) })
}

// requiredField says whether the schema (root, the kind's definition)
// lists the last segment of p as required in its parent's definition,
// and, with structural defaults, gives it no default.
func requiredField(models map[string]*spec.Schema, root *spec.Schema, p string, structural bool) bool {
	segs, err := jsonpointer.Parse(p)
	if err != nil || len(segs) == 0 || root == nil {
		return false
	}
	s := root
	for _, seg := range segs[:len(segs)-1] {
		if s = childSchema(models, resolveSchema(models, s), seg); s == nil {
			return false
		}
	}
	parent, last := resolveSchema(models, s), segs[len(segs)-1]
	if c, ok := parent.Properties[last]; ok && structural && c.Default != nil {
		// The API server defaults it before validating (a CRD's
		// structural default): the patched object is valid.
		return false
	}
	return slices.Contains(parent.Required, last)
}

// childSchema is the definition of seg under s: a property, a map value
// (additionalProperties) or a list item.
func childSchema(models map[string]*spec.Schema, s *spec.Schema, seg string) *spec.Schema {
	if c, ok := s.Properties[seg]; ok {
		return &c
	}
	if _, err := strconv.Atoi(seg); err == nil && s.Items != nil && s.Items.Schema != nil {
		return s.Items.Schema
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		return s.AdditionalProperties.Schema
	}
	return nil
}

// resolveSchema follows a $ref, or an allOf of one $ref (how OpenAPI v3
// wraps a typed reference with a description), to the named definition.
func resolveSchema(models map[string]*spec.Schema, s *spec.Schema) *spec.Schema {
	for range 8 {
		ref := s.Ref.String()
		if ref == "" && len(s.AllOf) == 1 {
			ref = s.AllOf[0].Ref.String()
		}
		if ref == "" {
			return s
		}
		next := models[ref[strings.LastIndex(ref, "/")+1:]]
		if next == nil {
			return s
		}
		s = next
	}
	return s
}
