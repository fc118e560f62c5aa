package argocd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// syncFails: Argo CD's sync of an OutOfSync object (selfHeal's too) is one
// client-side kubectl apply of Git's manifest (gitops-engine
// pkg/utils/kube/resource_ops.go ApplyResource), whose 3-way patch deletes
// every field the live last-applied-configuration lists and the manifest
// does not (syncPrunes). When such a field is one the API server requires
// (the kind's OpenAPI schema lists it in its parent's required), the
// server rejects the patched object (422 Invalid), gitops-engine marks the
// task SyncFailed and the operation Failed, and an automated sync retries
// the same apply (Retry{Limit: 5} by default, argo-cd
// controller/appcontroller.go autoSync) with the same answer: the sync
// changes nothing and the object stays OutOfSync. Seen on Argo CD v3.2.11,
// differential seed 20089: Git drops a CronJob's spec.schedule, Argo CD
// shows /spec/schedule and every self-heal attempt fails with
// "spec.schedule: Required value". So no field is written back: reverted
// becomes reported, and the phrases saying a sync deletes or re-applies a
// field are taken back. Needs the cluster's schema (SchemaFunc); without
// it the verdicts stay as the diff gave them.
func (a *Adapter) syncFails(rep *model.Report, live, desired *unstructured.Unstructured, app *Application) {
	if desired == nil || app == nil || a.opts.Schema == nil || app.HasSyncOption("ServerSideApply=true") ||
		hasAnnotationOption(desired.GetAnnotations(), AnnotationSyncOptions, "ServerSideApply=true") {
		return
	}
	deleted := syncDeleted(rep, live, desired, app)
	if len(deleted) == 0 {
		return
	}
	gvk := live.GroupVersionKind()
	models := a.schemas.models(a.opts.Schema, gvk.GroupVersion())
	root, ok := modelGVKs(models)[gvk]
	if !ok {
		return
	}
	// A built-in kind's published defaults are its Go zero values
	// (openapi-gen writes "default": "" for a required string), which the
	// API server does not apply; a custom resource's structural defaults
	// it applies before validating.
	structural := !scheme.Scheme.Recognizes(gvk)
	var missing []string
	for _, p := range deleted {
		if requiredField(models, models[root], p, structural) && parentStays(p, deleted, desired) {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return
	}
	why := fmt.Sprintf("a sync fails: its 3-way patch deletes %s, which the API server requires (OpenAPI schema of %s), so the server rejects the object and the sync changes nothing (an automated sync retries it, with the same answer)",
		strings.Join(missing, ", "), gvk.Kind)
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
			nv.Kind = model.Reported
			nv.Reason += "; but " + why
		case strings.Contains(v.Reason, SyncDeletesPhrase), strings.Contains(v.Reason, SyncReappliesPhrase):
			nv.Reason = strings.NewReplacer(SyncDeletesPhrase, "a sync would delete it", SyncReappliesPhrase, "a sync would re-apply Git's value").Replace(v.Reason) + "; but " + why
		default:
			continue
		}
		d.SetVerdict(nv)
	}
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
