package flux

import (
	"context"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ownerOf is the object's owner by its ownership labels or, when a person
// removed them, by the Kustomization inventories: kustomize-controller
// finds the objects it applies by its inventory (status.inventory.entries,
// ids "namespace_name_group_kind"), not by labels, so it reconciles an
// object whose labels were deleted and puts them back (measured, make
// differential seed 4048: a client-side `kubectl apply` of the Git
// manifest dropped them). The inventories are read (one LIST of
// Kustomizations) only for an object kustomize-controller's field manager
// wrote, so an object Flux never touched costs no request.
func (a *Adapter) ownerOf(ctx context.Context, obj *unstructured.Unstructured) *model.Owner {
	if o := a.Owner(obj); o != nil || obj == nil || a.reader == nil {
		return o
	}
	wrote := false
	for _, m := range obj.GetManagedFields() {
		wrote = wrote || m.Manager == KustomizeManager
	}
	if !wrote {
		return nil
	}
	gvk := obj.GroupVersionKind()
	id := strings.Join([]string{obj.GetNamespace(), obj.GetName(), gvk.Group, gvk.Kind}, "_")
	a.mu.Lock()
	if a.inventory == nil {
		a.mu.Unlock()
		index := map[string]*model.Owner{}
		list, err := a.reader.List(ctx, KustomizationGVK, "", "")
		if err != nil {
			return nil
		}
		for i := range list {
			ks := &list[i]
			entries, _, _ := unstructured.NestedSlice(ks.Object, "status", "inventory", "entries")
			for _, e := range entries {
				m, _ := e.(map[string]any)
				eid, _ := m["id"].(string)
				if eid != "" {
					index[eid] = &model.Owner{Engine: Engine, Kind: kustomizev1.KustomizationKind,
						Namespace: ks.GetNamespace(), Name: ks.GetName(),
						Via: "the inventory of Kustomization " + ks.GetNamespace() + "/" + ks.GetName() + " (its ownership labels were removed)"}
				}
			}
		}
		a.mu.Lock()
		a.inventory = index
	}
	found := a.inventory[id]
	a.mu.Unlock()
	if found == nil {
		return nil
	}
	o := *found
	return &o
}
