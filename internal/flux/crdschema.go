package flux

import (
	"context"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
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
			return &applyFailure{cause: fmt.Sprintf("the managedFields cleanup hands %s to kustomize-controller, whose apply removes it (not in the manifest), but the CustomResourceDefinition's schema requires it: the API server rejects the apply (Required value)", p)}
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
