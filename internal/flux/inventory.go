package flux

import (
	"context"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
	wrote, helmWrote := false, false
	for _, m := range obj.GetManagedFields() {
		wrote = wrote || m.Manager == KustomizeManager
		helmWrote = helmWrote || m.Manager == HelmManager
	}
	if helmWrote {
		if o := a.releaseOwner(ctx, obj); o != nil {
			return o
		}
	}
	if !wrote {
		return nil
	}
	gvk := obj.GroupVersionKind()
	id := strings.Join([]string{obj.GetNamespace(), obj.GetName(), gvk.Group, gvk.Kind}, "_")
	return a.indexedOwner(ctx, &a.inventory, KustomizationGVK, inventoryIndex, id)
}

// inventoryIndex maps each inventory entry's id to its Kustomization.
func inventoryIndex(list []unstructured.Unstructured) map[string]*model.Owner {
	index := map[string]*model.Owner{}
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
	return index
}

// indexedOwner looks key up in the index *field holds, built by build from
// one LIST of gvk on the first lookup and kept for the adapter's life; a
// failed LIST builds nothing, and the next lookup tries again.
func (a *Adapter) indexedOwner(ctx context.Context, field *map[string]*model.Owner, gvk schema.GroupVersionKind,
	build func([]unstructured.Unstructured) map[string]*model.Owner, key string) *model.Owner {
	a.mu.Lock()
	if *field == nil {
		a.mu.Unlock()
		list, err := a.reader.List(ctx, gvk, "", "")
		if err != nil {
			return nil
		}
		index := build(list)
		a.mu.Lock()
		*field = index
	}
	found := (*field)[key]
	a.mu.Unlock()
	if found == nil {
		return nil
	}
	o := *found
	return &o
}

// releaseOwner is the HelmRelease of an object helm-controller wrote whose
// ownership labels a person removed (a client-side apply that drops the
// labels map: make differential ENGINE=flux-helm seed 60903).
// helm-controller does not find its objects by those labels: it reconciles
// the Helm release, whose objects carry the Helm SDK's
// meta.helm.sh/release-name and release-namespace annotations (Helm
// pkg/action/validate.go), so the release they name leads to the
// HelmRelease that manages it (helm-controller api/v2 HelmRelease
// GetReleaseName/GetReleaseNamespace, and the release its history last
// recorded). One LIST of HelmReleases, on the first such object.
func (a *Adapter) releaseOwner(ctx context.Context, obj *unstructured.Unstructured) *model.Owner {
	an := obj.GetAnnotations()
	name, ns := an[helmReleaseNameAnnotation], an[helmReleaseNamespaceAnnotation]
	if name == "" || ns == "" {
		return nil
	}
	return a.indexedOwner(ctx, &a.releases, HelmReleaseGVK, releaseIndex, ns+"/"+name)
}

// releaseIndex maps each HelmRelease's Helm release ("namespace/name") to
// it: the release its spec names and the one its history last recorded
// (they differ while a renamed release is being replaced).
func releaseIndex(list []unstructured.Unstructured) map[string]*model.Owner {
	index := map[string]*model.Owner{}
	for i := range list {
		u := &list[i]
		// Only the fields the release's name derives from: a whole
		// typed conversion would fail on a status written by another
		// helm-controller version, and lose the object.
		var hr helmv2.HelmRelease
		hr.Name, hr.Namespace = u.GetName(), u.GetNamespace()
		hr.Spec.ReleaseName, _, _ = unstructured.NestedString(u.Object, "spec", "releaseName")
		hr.Spec.TargetNamespace, _, _ = unstructured.NestedString(u.Object, "spec", "targetNamespace")
		owner := &model.Owner{Engine: Engine, Kind: helmv2.HelmReleaseKind, Namespace: hr.Namespace, Name: hr.Name,
			Via: "the Helm release " + hr.GetReleaseNamespace() + "/" + hr.GetReleaseName() + " its meta.helm.sh annotations name (its ownership labels were removed)"}
		index[hr.GetReleaseNamespace()+"/"+hr.GetReleaseName()] = owner
		if key := latestRelease(u); key != "" {
			index[key] = owner
		}
	}
	return index
}

// latestRelease is "namespace/name" of the release a HelmRelease's history
// recorded last: the snapshot of the highest version (api/v2
// Snapshots.Latest sorts by version).
func latestRelease(u *unstructured.Unstructured) string {
	history, _, _ := unstructured.NestedSlice(u.Object, "status", "history")
	key, newest := "", int64(-1)
	for _, h := range history {
		m, _ := h.(map[string]any)
		name, _ := m["name"].(string)
		ns, _ := m["namespace"].(string)
		v, _, _ := unstructured.NestedInt64(m, "version")
		if name != "" && ns != "" && v > newest {
			key, newest = ns+"/"+name, v
		}
	}
	return key
}
