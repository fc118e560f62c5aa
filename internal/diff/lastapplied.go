package diff

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// LastAppliedPointer is the JSON pointer of kubectl's client-side apply
// record, kubectl.kubernetes.io/last-applied-configuration.
const LastAppliedPointer = "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"

// LastApplied returns kubectl's last-applied-configuration annotation of
// live as an added field, attributed to the managers that own it (ix may be
// nil), or false when live has none.
//
// Compute and Infer never report it: for Argo CD it is bookkeeping (its
// diff normalizes it away, and its client-side syncs write it). An engine
// whose apply removes it calls this to put it back in the report:
// kustomize-controller deletes it on every apply (fluxcd/pkg ssa
// ApplyCleanupOptions.Annotations, set by kustomize-controller
// internal/controller/kustomization_controller.go apply()), so it is a
// change the next reconcile makes. Its value holds a whole manifest: a
// Secret's (with its data) is masked.
func LastApplied(live *unstructured.Unstructured, ix *managedfields.Index) (model.FieldDrift, bool) {
	if live == nil || live.Object == nil {
		return model.FieldDrift{}, false
	}
	raw, ok := live.GetAnnotations()[managedfields.LastAppliedAnnotation]
	if !ok {
		return model.FieldDrift{}, false
	}
	fd := model.FieldDrift{
		Path:      LastAppliedPointer,
		FieldPath: ix.FieldPath(live, LastAppliedPointer),
		Change:    model.Added,
		Live:      raw,
		Cause:     model.CauseUnknown,
	}
	if isSecret(live) {
		fd.Live = redact.Mask
	}
	if !ix.Empty() {
		fd.Managers = ix.Owners(live, fd.Path)
	}
	for _, m := range fd.Managers {
		if managedfields.IsGitOpsManager(m.Manager) {
			continue
		}
		fd.Cause = classOf(m)
		break
	}
	return fd, true
}
