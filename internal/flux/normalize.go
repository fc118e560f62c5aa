package flux

import (
	"context"
	"errors"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/fluxcd/pkg/ssa/normalize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"

	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// Normalize returns obj as Flux compares it: Flux's own normalization
// (fluxcd/pkg ssa normalize.Unstructured: typed round trip, default
// protocols, Secret stringData folded into data, status and
// creationTimestamp dropped), without managedFields, and with the paths of
// the owner's ignore rules that match it removed by Flux's json-patch code
// (ssa manager_diff.go Diff strips them the same way before printing).
// Secret values are masked. The owner is found from the ownership labels;
// without one, no rules are applied.
func (a *Adapter) Normalize(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if obj == nil {
		return nil, errors.New("flux: nothing to normalize")
	}
	out := obj.DeepCopy()
	if err := normalize.Unstructured(out); err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(out.Object, "metadata", "managedFields")
	if o := a.Owner(obj); o != nil {
		rep := model.NewReport(model.ResourceID{}, model.SourceFile)
		if st, _ := a.resolveOwner(ctx, o, rep); st != nil {
			var paths jsondiff.IgnorePaths
			for _, r := range st.rules {
				if r.err != nil || !r.sr.MatchUnstructured(out) {
					continue
				}
				for pi, p := range r.paths {
					if _, bad := r.pathErrs[pi]; !bad && p != jsondiff.IgnorePathRoot {
						paths = append(paths, p)
					}
				}
			}
			if len(paths) > 0 {
				if err := jsondiff.ApplyPatchToUnstructured(out, jsondiff.GenerateRemovePatch(paths...)); err != nil {
					return nil, err
				}
			}
		}
	}
	if out.GetKind() == "Secret" && out.GroupVersionKind().Group == "" {
		// The same masking flux diff applies (ssa sanitize.go).
		if err := ssa.SanitizeUnstructuredData(out, out.DeepCopy()); err != nil {
			return nil, err
		}
		// Flux folds stringData into data only when the typed conversion
		// works; never let a value through either way.
		if sd, ok, _ := unstructured.NestedMap(out.Object, "stringData"); ok {
			_ = unstructured.SetNestedMap(out.Object, redact.Value(sd).(map[string]any), "stringData")
		}
	}
	return out, nil
}
