package flux

import (
	"fmt"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// csaManager is the field manager of kubectl's client-side apply.
const csaManager = "kubectl-client-side-apply"

// inferredRestore says why, in inferred mode, a field a client-side apply
// owns may hold Git's own value (then kustomize-controller's apply after
// the managedFields cleanup writes the same value and nothing changes),
// or "" when it cannot: the generation shows that the apply changed the
// value kustomize-controller created the object with.
//
// A client-side apply sends a whole manifest, in the common case the
// repository's own file, and owns a field only where it changed the value
// (an Update takes ownership of what it changes, k8s.io/apiserver
// fieldmanager): a field someone else had drifted before it comes back
// with Git's value, owned by kubectl (make differential seeds 9000, 30066,
// 30088: the controller left it). managedFields keep no values, and the
// earlier writer's entry is gone once the apply took its fields over, so
// only metadata.generation, which counts spec writes, can tell: at 2 the
// apply was the only one after kustomize-controller's create (1), so it
// changed the value Git created the object with. Labels and annotations
// do not move the generation, so nothing tells for them.
func (j *judgment) inferredRestore(d *model.FieldDrift, cleaned []model.ManagerRef) string {
	csa := false
	for _, m := range cleaned {
		if m.Manager == csaManager && m.Operation == "Update" {
			csa = true
		}
	}
	if !csa || j.desired != nil || j.live == nil {
		return ""
	}
	if !strings.HasPrefix(d.Path, "/metadata/") && j.live.GetGeneration() == 2 {
		return ""
	}
	return fmt.Sprintf("set by %s: a client-side apply sends a whole manifest and owns what it changed, so this may be Git's own value put back after another write (then the apply after the managedFields cleanup writes the same value and nothing changes) or a value of its own (then it is reverted %s); inferred mode cannot see Git (metadata.generation %d does not show that the apply was the only write since kustomize-controller created the object): give -f FILE to know",
		managerList(cleaned), j.every(), j.live.GetGeneration())
}
