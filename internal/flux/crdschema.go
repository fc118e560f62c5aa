package flux

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// crdGVK is what custom resources are defined by.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// crdSchema returns the structural schema (openAPIV3Schema) the API server
// validates and defaults a custom resource with, read from its
// CustomResourceDefinition (one LIST of the CRDs per run, cached), or nil
// for a built-in kind or a CRD that cannot be read.
func (a *Adapter) crdSchema(ctx context.Context, gvk schema.GroupVersionKind) map[string]any {
	if gvk.Group == "" || a.reader == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.crds == nil {
		// A failed read (Forbidden) is remembered as no schema: one LIST
		// per adapter, not one per judged object.
		a.crds = map[schema.GroupVersionKind]map[string]any{}
		crds, err := a.reader.List(ctx, crdGVK, "", "")
		if err != nil {
			return nil
		}
		for i := range crds {
			addCRDSchemas(a.crds, &crds[i])
		}
	}
	return a.crds[gvk]
}

// addCRDSchemas indexes the schema of every version a CRD serves.
func addCRDSchemas(into map[schema.GroupVersionKind]map[string]any, crd *unstructured.Unstructured) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		root, _, _ := unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
		if name != "" && root != nil {
			into[schema.GroupVersionKind{Group: group, Version: name, Kind: kind}] = root
		}
	}
}

// schemaField finds the schema of the field at pointer (object properties
// only: a pointer through a list or a map of additionalProperties gives
// nothing) and says whether its parent requires it.
func schemaField(root map[string]any, pointer string) (field map[string]any, required bool) {
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil || len(tokens) == 0 {
		return nil, false
	}
	cur := root
	for i, t := range tokens {
		props, _ := cur["properties"].(map[string]any)
		next, _ := props[t].(map[string]any)
		if next == nil {
			return nil, false
		}
		if i == len(tokens)-1 {
			req, _ := cur["required"].([]any)
			return next, slices.Contains(req, any(t))
		}
		cur = next
	}
	return nil, false
}

// schemaMissingRequired is the pointer of the first field v lacks that
// its schema node requires and does not default (the structural schema's
// validation on create; the API server defaults before it validates), or
// "" when v has every required field.
func schemaMissingRequired(s map[string]any, v any, at string) string {
	switch t := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			if _, has := t[name]; has {
				continue
			}
			if p, _ := props[name].(map[string]any); p == nil || p["default"] == nil {
				return at + "/" + jsonpointer.Escape(name)
			}
		}
		extra, _ := s["additionalProperties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(t)) {
			child, _ := props[k].(map[string]any)
			if child == nil {
				child = extra
			}
			if child == nil {
				continue
			}
			if p := schemaMissingRequired(child, t[k], at+"/"+jsonpointer.Escape(k)); p != "" {
				return p
			}
		}
	case []any:
		items, _ := s["items"].(map[string]any)
		if items == nil {
			return ""
		}
		for i, c := range t {
			if p := schemaMissingRequired(items, c, at+"/"+strconv.Itoa(i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// schemaRequiredHandover, with -f: a custom resource's field that the
// managedFields cleanup hands to kustomize-controller and its apply then
// drops (not in the manifest), while the CRD's schema requires it: the API
// server rejects that apply (Required value), the Kustomization turns
// Ready=False and the field stays (make differential seed 20008: the
// cleanup runs after a successful dry-run, the apply fails, and from the
// next reconcile on the dry-run fails). --server-dry-run asks the API
// server instead (dryRunHandover).
func (a *Adapter) schemaRequiredHandover(ctx context.Context, j *judgment) *applyFailure {
	if j.desired == nil {
		// Inferred: whether the manifest sets the field is not known.
		return nil
	}
	ptrs := j.handedOver()
	if len(ptrs) == 0 {
		return nil
	}
	root := a.crdSchema(ctx, j.live.GroupVersionKind())
	if root == nil {
		return nil
	}
	j.crdRoot = root
	for _, p := range ptrs {
		if _, req := schemaField(root, p); req {
			return &applyFailure{handedOver: true, cause: fmt.Sprintf("the managedFields cleanup hands %s to kustomize-controller, whose apply removes it (not in the manifest), but the CustomResourceDefinition's schema requires it: the API server rejects the apply (Required value)", p)}
		}
	}
	return nil
}

// schemaDefault: the live value of a custom resource's field is the
// default its CRD's schema gives it (the API server fills it again when
// an apply drops it).
func (j *judgment) schemaDefault(pointer string, live any) bool {
	if j.crdRoot == nil {
		return false
	}
	f, _ := schemaField(j.crdRoot, pointer)
	def, ok := f["default"]
	return ok && apiequality.Semantic.DeepEqual(diff.NormalizeNumber(def), diff.NormalizeNumber(live))
}

// schemaRequiredDropped, with -f: a custom resource's field the manifest
// no longer sets, which only kustomize-controller's apply owns, so the
// apply removes it, while the CRD's schema requires it (and gives no
// default): the API server rejects the dry-run apply itself (Required
// value), the Kustomization turns Ready=False and nothing changes (make
// differential seed 40979: Git removed a Backup's schedule; -f said
// reverted, --server-dry-run's failed dry-run said apply-fails).
func (a *Adapter) schemaRequiredDropped(ctx context.Context, j *judgment, rep *model.Report) *applyFailure {
	if j.desired == nil || j.merged != nil || j.live == nil {
		return nil
	}
	var root map[string]any
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		if d.Change != model.Added || !onlyFluxApplies(d.Managers) {
			continue
		}
		if in, _ := j.inManifest(d); in {
			continue
		}
		if root == nil {
			if root = a.crdSchema(ctx, j.live.GroupVersionKind()); root == nil {
				return nil
			}
		}
		if f, req := schemaField(root, d.Path); req && f["default"] == nil {
			return &applyFailure{beforeCleanup: true, creationFails: true, cause: fmt.Sprintf(
				"the manifest no longer sets %s, which only kustomize-controller's apply owns, so the apply removes it, but the CustomResourceDefinition's schema requires it: the API server rejects the dry-run apply (Required value)", d.Path)}
		}
	}
	return nil
}

// adoptedNullRejected: an ignored path the manifest sets and the live
// object lacks is adopted as null (adoptions; fluxcd/pkg ssa
// applyDriftResult writes the missing live value into the payload), after
// the dry-run of the raw manifest passed. A built-in type decodes that null
// to its zero or to nothing (adoptsNothing), but a custom resource's
// structural schema rejects null for a field that is not nullable and has
// no default: the apply fails, the Kustomization turns Ready=False and the
// object stays as it is (make differential seed 47371, R18: "spec.template
// .spec.serviceAccountName: Invalid value: \"null\": ... must be of type
// string"). With --server-dry-run the API server is asked with that very
// payload; with -f the CRD's schema decides.
func (a *Adapter) adoptedNullRejected(ctx context.Context, j *judgment, rep *model.Report) *applyFailure {
	if j.desired == nil || !j.appliedEveryReconcile {
		return nil
	}
	var nulls []adoption
	for _, ad := range j.adoptions() {
		if _, ok := jsonpointer.Get(j.live.Object, ad.path); ok {
			continue
		}
		if _, ok := jsonpointer.Get(ad.payload.Object, ad.path); !ok {
			continue // adoptFailure
		}
		nulls = append(nulls, ad)
	}
	if len(nulls) == 0 {
		return nil
	}
	if a.serverDryRun && j.sent != nil {
		send := j.sent.DeepCopy()
		for _, ad := range nulls {
			if err := jsondiff.ApplyPatchToUnstructured(send, jsondiff.GenerateReplacePatch(jsondiff.ReplaceOp{Path: ad.path, Value: nil})); err != nil {
				return nil
			}
		}
		_, err := a.dryRunner(ctx, send, j.manager)
		switch {
		case err == nil:
			return nil
		case apierrors.IsInvalid(err):
			return &applyFailure{adopted: adoptionPaths(nulls), cause: fmt.Sprintf("%s adopts the missing live value of %s as null into the apply; a server-side dry-run of that apply as %s fails: %v",
				adoptionRules(nulls), strings.Join(adoptionPaths(nulls), ", "), j.manager, err)}
		default:
			rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "dry-run-failed",
				Message: fmt.Sprintf("the server-side dry-run of the apply with %s adopted as null failed: %v; whether the apply fails is not known", strings.Join(adoptionPaths(nulls), ", "), err)})
			return nil
		}
	}
	root := a.crdSchema(ctx, j.live.GroupVersionKind())
	if root == nil {
		return nil
	}
	for _, ad := range nulls {
		f, _ := schemaField(root, ad.path)
		if f == nil || f["nullable"] == true || f["default"] != nil {
			continue
		}
		return &applyFailure{adopted: []string{ad.path}, cause: fmt.Sprintf("%s adopts the missing live value of %s as null into the apply, and the CustomResourceDefinition's schema does not allow null there (not nullable, no default): the API server rejects the apply (Invalid value: \"null\")",
			adoptionRules([]adoption{ad}), ad.path)}
	}
	return nil
}

func adoptionRules(ads []adoption) string {
	var parts []string
	for _, ad := range ads {
		s := ad.rule.rule.Origin.Object + " " + ad.rule.rule.Origin.Field
		if !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

func adoptionPaths(ads []adoption) []string {
	parts := make([]string, len(ads))
	for i, ad := range ads {
		parts[i] = ad.path
	}
	return parts
}
