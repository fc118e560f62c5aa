package scan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// UpdateOwner hands an engine object as a watch sees it now (deleted: it
// is gone) to every adapter that follows its owners
// (engine.OwnerFollower), and returns what changed for the verdicts:
// scan --watch and serve then judge the objects it names again.
func (in *Inspector) UpdateOwner(obj *unstructured.Unstructured, deleted bool) []engine.OwnerChange {
	var out []engine.OwnerChange
	for _, a := range in.Adapters {
		f, ok := a.(engine.OwnerFollower)
		if !ok {
			continue
		}
		if c := f.UpdateOwner(obj, deleted); c.Changed() {
			out = append(out, c)
		}
	}
	return out
}

// OwnedBy says whether one of obj's owners (by labels and annotations,
// no cluster read) is owner (engine, kind, namespace and name).
func (in *Inspector) OwnedBy(obj *unstructured.Unstructured, owner model.Owner) bool {
	for _, o := range in.owners(obj) {
		if o.owner.Engine == owner.Engine && o.owner.Kind == owner.Kind && o.owner.Namespace == owner.Namespace && o.owner.Name == owner.Name {
			return true
		}
	}
	return false
}

// Touches says whether a change names obj: every object of its owner, or
// obj among its objects.
func (in *Inspector) Touches(c engine.OwnerChange, obj *unstructured.Unstructured) bool {
	if c.All {
		return in.OwnedBy(obj, c.Owner)
	}
	gvk := obj.GroupVersionKind()
	for _, r := range c.Objects {
		if r.Group == gvk.Group && r.Kind == gvk.Kind && r.Namespace == obj.GetNamespace() && r.Name == obj.GetName() {
			return true
		}
	}
	return false
}
