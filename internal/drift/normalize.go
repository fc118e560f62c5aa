package drift

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// NormalizeRequest is one `normalize`: an object (and, for a diff, the
// desired state) seen through one engine's normalization.
type NormalizeRequest struct {
	// Live is the object to normalize.
	Live *unstructured.Unstructured
	// Desired is the desired state to diff against, or nil.
	Desired *unstructured.Unstructured
	// Adapter is the engine whose view is wanted (PickAdapter).
	Adapter engine.Normalizer
	// Full keeps every live field in a diff; otherwise only the fields the
	// desired state sets are kept (Argo CD's two-way diff).
	Full bool
}

// Normalized is the result: Live normalized, and Desired normalized with
// Live projected onto it when a desired state was given.
type Normalized struct {
	Live, Desired *unstructured.Unstructured
}

// Normalize runs the engine's normalization on the live object and, when
// given, on the desired state, after copying the live object's owner marks
// the desired state lacks (the engines add them at apply time; without
// them the owner's rules would not apply to the desired side).
func Normalize(ctx context.Context, req NormalizeRequest) (*Normalized, error) {
	nlive, err := req.Adapter.Normalize(ctx, req.Live)
	if err != nil {
		return nil, err
	}
	out := &Normalized{Live: keepInputFields(req.Live, nlive)}
	if req.Desired == nil {
		return out, nil
	}
	// Every engine's marks (none is drift for any engine), and the marks
	// the chosen engine's settings name (a customized instance label).
	ann, labels := engine.OwnerMarks()
	if m, ok := req.Adapter.(engine.OwnerMarker); ok {
		a, l := m.OwnerMarks()
		ann, labels = append(ann, a...), append(labels, l...)
	}
	InheritOwnerMarks(req.Live, req.Desired, ann, labels)
	nd, err := req.Adapter.Normalize(ctx, req.Desired)
	if err != nil {
		return nil, err
	}
	out.Desired = keepInputFields(req.Desired, nd)
	if !req.Full {
		// What Argo CD's two-way diff compares; Flux gets the same effect
		// from defaulting both sides in its dry-run.
		out.Live = &unstructured.Unstructured{Object: diff.ProjectMap(out.Desired.Object, out.Live.Object)}
	}
	return out, nil
}

// PickAdapter returns the adapter whose view of obj is wanted: the one of
// the selected engine, or with auto the one engine that owns obj, as its
// adapter tells from the object's marks and the engine's settings (a
// customized instance label included). An object that several engines
// or none claim needs an explicit --engine.
func PickAdapter(selected string, adapters []model.Adapter, obj *unstructured.Unstructured) (model.Adapter, error) {
	var owners []model.Adapter
	var names []string
	for _, a := range adapters {
		if selected != engine.Auto && selected != "" {
			if string(a.Engine()) == selected {
				return a, nil
			}
			continue
		}
		if a.Owner(obj) != nil {
			owners = append(owners, a)
		}
		names = append(names, "--engine "+string(a.Engine()))
	}
	if selected != engine.Auto && selected != "" {
		return nil, fmt.Errorf("unknown engine %q", selected)
	}
	switch len(owners) {
	case 1:
		return owners[0], nil
	case 0:
		return nil, fmt.Errorf("%s carries the owner marks of no engine: give %s", resourceRef(obj), engine.Or(names))
	}
	var which []string
	for _, a := range owners {
		which = append(which, string(a.Engine()))
	}
	return nil, fmt.Errorf("%s is marked by %s: give %s", resourceRef(obj), strings.Join(which, " and "), engine.Or(names))
}

func resourceRef(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}

// InheritOwnerMarks copies the owner marks (annotation and label keys) of
// live that desired lacks. The controllers add them at apply time, so the
// desired state in Git lacks them; Argo CD itself copies the tracking
// marks from live to config before diffing (util/argo/diff
// normalizeTracking).
func InheritOwnerMarks(live, desired *unstructured.Unstructured, annotations, labels []string) {
	copyMarks := func(from, to map[string]string, keys []string) map[string]string {
		for _, k := range keys {
			if v, ok := from[k]; ok {
				if _, has := to[k]; !has {
					if to == nil {
						to = map[string]string{}
					}
					to[k] = v
				}
			}
		}
		return to
	}
	if a := copyMarks(live.GetAnnotations(), desired.GetAnnotations(), annotations); len(a) > 0 {
		desired.SetAnnotations(a)
	}
	if l := copyMarks(live.GetLabels(), desired.GetLabels(), labels); len(l) > 0 {
		desired.SetLabels(l)
	}
}

// keepInputFields drops what normalizing added that the input did not have:
// the engines normalize through typed structs, whose round trip writes
// zero values (creationTimestamp: null, strategy: {}) that are neither in
// the input nor what the engine compares. Fields the rules removed stay
// removed, and normalized values stay normalized.
func keepInputFields(in, normalized *unstructured.Unstructured) *unstructured.Unstructured {
	if in == nil || normalized == nil {
		return normalized
	}
	return &unstructured.Unstructured{Object: diff.ProjectMap(in.Object, normalized.Object)}
}
