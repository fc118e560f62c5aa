package drift

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Attribute fills, for every drift, the managers that own the field now
// (when the diff did not), its field path, and the cause: the class of the
// most recent manager that is not a GitOps engine, or unknown.
func Attribute(r *model.Report, live *unstructured.Unstructured, ix *managedfields.Index) {
	attribute(r, live, ix, false)
}

// attribute is Attribute; keepCause keeps a cause the diff set. A scan
// keeps diff.Infer's, which skips status writers and built-in controllers
// the way Culprit does, so that its summary and its objects agree.
func attribute(r *model.Report, live *unstructured.Unstructured, ix *managedfields.Index, keepCause bool) {
	for i := range r.Drifts {
		d := &r.Drifts[i]
		if d.FieldPath == "" {
			d.FieldPath = managedfields.FieldPath(live, d.Path)
		}
		if len(d.Managers) == 0 && !ix.Empty() && d.Change != model.Removed {
			d.Managers = ix.Owners(live, d.Path)
		}
		if keepCause && d.Cause != "" {
			continue
		}
		d.Cause = CauseOf(d.Managers)
	}
}

// CauseOf picks the most recent non-GitOps manager's class. Managers come
// most recent first; entries without a time (the API server records none
// for scale subresource updates) keep their place.
func CauseOf(ms []model.ManagerRef) model.CauseClass {
	for _, m := range ms {
		if managedfields.IsGitOpsManager(m.Manager) {
			continue
		}
		if m.Class == "" {
			return managedfields.Classify(m.Manager, m.Operation, m.Subresource)
		}
		return m.Class
	}
	return model.CauseUnknown
}

// Relevant says whether a manager's fields can be drift: not a GitOps
// engine, not a status writer (status is never desired state: engines
// ignore /status or never apply it), and not a built-in controller unless
// includeControllers.
func Relevant(manager, operation, subresource string, includeControllers bool) bool {
	if subresource == "status" || managedfields.IsGitOpsManager(manager) {
		return false
	}
	if !includeControllers && managedfields.Classify(manager, operation, subresource) == model.CauseController {
		return false
	}
	return true
}

// Culprit is the manager a drifted field is attributed to in a scan: the
// most recent relevant owner, else the most recent owner.
func Culprit(fd model.FieldDrift, includeControllers bool) model.ManagerRef {
	for _, m := range fd.Managers {
		if Relevant(m.Manager, m.Operation, m.Subresource, includeControllers) {
			return m
		}
	}
	if len(fd.Managers) > 0 {
		return fd.Managers[0]
	}
	return model.ManagerRef{Manager: "unknown", Class: model.CauseUnknown}
}

// PickDocument returns the document that is the live object: same API
// group and kind, same name, and same namespace (a document without a
// namespace is in defaultNamespace, as kubectl apply would put it).
func PickDocument(docs []*unstructured.Unstructured, live *unstructured.Unstructured, defaultNamespace string) (*unstructured.Unstructured, error) {
	lgvk := live.GroupVersionKind()
	var candidates []string
	for _, d := range docs {
		if d == nil {
			continue
		}
		gvk := d.GroupVersionKind()
		ns := d.GetNamespace()
		if ns == "" && live.GetNamespace() != "" {
			ns = defaultNamespace
			if ns == "" {
				ns = live.GetNamespace()
			}
		}
		if gvk.Group == lgvk.Group && gvk.Kind == lgvk.Kind && d.GetName() == live.GetName() && (live.GetNamespace() == "" || ns == live.GetNamespace()) {
			return d, nil
		}
		if len(candidates) < 5 {
			candidates = append(candidates, describeObj(d))
		}
	}
	want := describeObj(live)
	if len(candidates) == 0 {
		return nil, fmt.Errorf("no Kubernetes object found, want %s", want)
	}
	more := ""
	if len(docs) > len(candidates) {
		more = ", ..."
	}
	return nil, fmt.Errorf("no document is %s (found %s%s)", want, strings.Join(candidates, ", "), more)
}

func describeObj(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	id := model.ResourceID{Group: gvk.Group, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
	return id.String()
}
