package diff

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// InferOptions tunes Infer.
type InferOptions struct {
	// IncludeControllers also reports fields owned only by built-in
	// controllers (kube-controller-manager's revision annotations...),
	// which are bookkeeping, not drift, in nearly every cluster.
	IncludeControllers bool
}

// Inference is the drift Infer found from field ownership alone.
type Inference struct {
	// Drifts are sorted by path; never nil.
	Drifts []model.FieldDrift
	// Notes say where desired values came from (or that they are unknown)
	// and what was left out.
	Notes []model.Note
	// EngineWrote is false when no GitOps field manager owns any field:
	// there is then no desired state to infer drift from.
	EngineWrote bool
}

// Infer finds drift from field ownership alone, for when no manifest is
// given: on an object a GitOps engine's field manager has written, every
// leaf field that no GitOps manager owns and that another manager (a
// person, an autoscaler, an operator) does was changed or added behind the
// engine's back. A field both own holds the engine's value: an Update that
// changes a value takes the field away from every other manager
// (k8s.io/apiserver pkg/endpoints/handlers/fieldmanager), so it is not drift.
//
// managedFields say who owns a field, not what it held before, so desired
// values are unknown unless a GitOps manager applied client-side and left
// kubectl's last-applied-configuration, which holds exactly what it applied
// (a field holding that very value is then not drift). Status and the
// last-applied record itself are never drift. explain and scan both call
// this, so they agree on every object.
func Infer(live *unstructured.Unstructured, ix *managedfields.Index, opts InferOptions) Inference {
	res := Inference{Drifts: []model.FieldDrift{}}
	if ix == nil || ix.Empty() {
		return res
	}
	lastAppliedPtr := "/metadata/annotations/" + jsonpointer.Escape(managedfields.LastAppliedAnnotation)
	var desired map[string]any
	desiredBy := ""
	controllerOnly := 0
	for _, leaf := range ix.Leaves(live) {
		engine, cause, controller := leafOwners(leaf, opts)
		if engine != "" {
			res.EngineWrote = true
			if leaf.Pointer == lastAppliedPtr && desired == nil {
				desired, desiredBy = decodeLastApplied(live), engine
			}
			continue
		}
		if leaf.Pointer == lastAppliedPtr || leaf.Pointer == "/status" || strings.HasPrefix(leaf.Pointer, "/status/") {
			continue
		}
		if cause == nil {
			if controller {
				controllerOnly++
			}
			continue
		}
		fd := model.FieldDrift{
			Path:      leaf.Pointer,
			FieldPath: leaf.FieldPath,
			Change:    model.Changed,
			Managers:  leaf.Owners,
			Cause:     classOf(*cause),
		}
		if isMetadataMapKey(leaf.Pointer) {
			// A label or annotation key the engine does not own: overwriting
			// the engine's own key needs --overwrite, so it was almost
			// always added by hand (kubectl label/annotate).
			fd.Change = model.Added
		}
		fd.Live, _ = jsonpointer.Get(live.Object, leaf.Pointer)
		res.Drifts = append(res.Drifts, fd)
	}
	if !res.EngineWrote {
		res.Drifts = []model.FieldDrift{}
		res.Notes = []model.Note{{Level: model.NoteInfo, Reason: "no-gitops-manager",
			Message: "no GitOps field manager (argocd-controller, kustomize-controller, helm-controller) owns any field of this object, so there is no desired state to infer drift from; pass -f or -k to compare with a manifest"}}
		return res
	}
	if desired != nil {
		res.Drifts = compareLastApplied(res.Drifts, desired)
		res.Notes = append(res.Notes, model.Note{Level: model.NoteInfo, Reason: "last-applied",
			Message: fmt.Sprintf("desired values come from the %s annotation written by %s", managedfields.LastAppliedAnnotation, desiredBy)})
	} else if len(res.Drifts) > 0 {
		res.Notes = append(res.Notes, model.Note{Level: model.NoteInfo, Reason: "values-unknown",
			Message: "managedFields record who owns a field, not the value the engine applied: desired values are unknown; pass -f or -k to compare values"})
	}
	if controllerOnly > 0 {
		res.Notes = append(res.Notes, model.Note{Level: model.NoteInfo, Reason: "controller-fields",
			Message: fmt.Sprintf("%d field(s) written only by built-in controllers are not counted as drift", controllerOnly)})
	}
	if isSecret(live) {
		maskSecretValues(res.Drifts)
	}
	return res
}

// leafOwners reads a field's owners (most recent first): the GitOps engine
// that owns it, if one does; else the manager that last took it over (the
// cause of its drift), skipping the status subresource and, unless asked
// for, the built-in controllers (controller is then set).
func leafOwners(leaf managedfields.OwnedField, opts InferOptions) (engine string, cause *model.ManagerRef, controller bool) {
	for i := range leaf.Owners {
		o := &leaf.Owners[i]
		if managedfields.IsGitOpsManager(o.Manager) {
			return o.Manager, nil, false
		}
		if o.Subresource == "status" {
			continue
		}
		if classOf(*o) == model.CauseController && !opts.IncludeControllers {
			controller = true
			continue
		}
		if cause == nil {
			cause = o
		}
	}
	return "", cause, controller
}

// compareLastApplied gives the drifts the values of the engine's
// last-applied manifest: a field it does not hold was added, a field
// holding the very value the engine asked for is no drift.
func compareLastApplied(drifts []model.FieldDrift, desired map[string]any) []model.FieldDrift {
	kept := drifts[:0]
	for _, fd := range drifts {
		want, ok := jsonpointer.Get(desired, fd.Path)
		switch {
		case !ok:
			fd.Change = model.Added
		case equalJSON(want, fd.Live):
			continue
		default:
			fd.Desired, fd.Change = want, model.Changed
		}
		kept = append(kept, fd)
	}
	return kept
}

// maskSecretValues masks a Secret's data values in both columns.
func maskSecretValues(drifts []model.FieldDrift) {
	for i := range drifts {
		fd := &drifts[i]
		if redact.ValuePath(fd.Path) {
			fd.Live, fd.Desired = redact.Value(fd.Live), redact.Value(fd.Desired)
		}
	}
}

func classOf(m model.ManagerRef) model.CauseClass {
	if m.Class != "" {
		return m.Class
	}
	return managedfields.Classify(m.Manager, m.Operation, m.Subresource)
}

// decodeLastApplied reads kubectl's client-side apply record; nil when
// absent or not JSON.
func decodeLastApplied(obj *unstructured.Unstructured) map[string]any {
	raw := obj.GetAnnotations()[managedfields.LastAppliedAnnotation]
	if raw == "" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil
	}
	return m
}

func isMetadataMapKey(pointer string) bool {
	for _, p := range []string{"/metadata/labels/", "/metadata/annotations/"} {
		if strings.HasPrefix(pointer, p) && !strings.Contains(pointer[len(p):], "/") {
			return true
		}
	}
	return false
}
