package flux

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

var _ engine.OwnerFollower = (*Adapter)(nil)

// UpdateOwner implements engine.OwnerFollower: scan --watch and serve hand
// it each Kustomization and HelmRelease as their watch sees it. The
// adapter resolves an owner once and keeps it (resolveOwner), so without
// this a Kustomization suspended, given a spec.ignore rule or a
// HelmRelease whose driftDetection mode changed after start-up would be
// judged as it was then. The owner is replaced by obj (or recorded as
// gone); an owner read from a file stays.
//
// Only the spec decides Flux's verdicts (suspend, interval, ignore rules,
// driftDetection): both kinds have a status subresource, so
// metadata.generation moves with the spec alone, and a status written by
// each reconcile changes no verdict.
func (a *Adapter) UpdateOwner(obj *unstructured.Unstructured, deleted bool) engine.OwnerChange {
	gvk := obj.GroupVersionKind()
	if gvk.GroupKind() != KustomizationGVK.GroupKind() && gvk.GroupKind() != HelmReleaseGVK.GroupKind() {
		return engine.OwnerChange{}
	}
	owner := model.Owner{Engine: Engine, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if _, fromFile := a.findDoc(owner.Kind, owner.Namespace, owner.Name); fromFile {
		return engine.OwnerChange{}
	}
	key := owner.Kind + "/" + owner.Namespace + "/" + owner.Name
	a.mu.Lock()
	old, had := a.owners[key]
	a.mu.Unlock()
	var res ownerResult
	if deleted {
		res = missingOwner(owner.Ref())
	} else {
		if old.st != nil && old.st.doc.obj.GetResourceVersion() == obj.GetResourceVersion() && obj.GetResourceVersion() != "" {
			return engine.OwnerChange{}
		}
		res = ownerResultOf(obj.DeepCopy())
	}
	// Kept even when no object was judged with it yet: the reader's copy
	// (scan's LIST, read once) may be older.
	a.mu.Lock()
	if a.owners == nil {
		a.owners = map[string]ownerResult{}
	}
	a.owners[key] = res
	a.mu.Unlock()
	if !had {
		return engine.OwnerChange{} // no verdict was given with it
	}
	if old.st != nil && res.st != nil && old.st.doc.obj.GetGeneration() == res.st.doc.obj.GetGeneration() && obj.GetGeneration() != 0 {
		return engine.OwnerChange{} // status only
	}
	return engine.OwnerChange{Owner: owner, All: true}
}
