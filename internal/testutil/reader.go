package testutil

import (
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Reader is an in-memory model.Reader, the engines' unit-test stand-in for
// the cluster: it serves copies of Objects and answers NotFound and
// Forbidden as the API server's StatusErrors, as the real reader does.
type Reader struct {
	Objects []*unstructured.Unstructured
	// Allowed, when not nil, is the namespaces the test's user may read
	// ("" for lists across all namespaces); reads elsewhere are Forbidden.
	Allowed map[string]bool
	// Forbidden refuses every read.
	Forbidden bool

	// Gets counts the Get calls; Lists records each List's namespace.
	Gets  int
	Lists []string
}

func (r *Reader) forbidden(gvk schema.GroupVersionKind, ns, name string) error {
	if r.Forbidden || (r.Allowed != nil && !r.Allowed[ns]) {
		return apierrors.NewForbidden(resource(gvk), name, errors.New("denied"))
	}
	return nil
}

// resource names the kind's resource the way the API server's errors do
// (lower-case plural; good enough for the kinds the tests read).
func resource(gvk schema.GroupVersionKind) schema.GroupResource {
	return schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
}

// Get returns a copy of the object of that kind, namespace and name.
func (r *Reader) Get(_ context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	r.Gets++
	if err := r.forbidden(gvk, ns, name); err != nil {
		return nil, err
	}
	for _, o := range r.Objects {
		if o.GroupVersionKind() == gvk && o.GetNamespace() == ns && o.GetName() == name {
			return o.DeepCopy(), nil
		}
	}
	return nil, apierrors.NewNotFound(resource(gvk), name)
}

// List returns copies of the objects of that kind in namespace ns, or in
// every namespace when ns is "". The label selector is not applied.
func (r *Reader) List(_ context.Context, gvk schema.GroupVersionKind, ns, _ string) ([]unstructured.Unstructured, error) {
	r.Lists = append(r.Lists, ns)
	if err := r.forbidden(gvk, ns, ""); err != nil {
		return nil, err
	}
	var out []unstructured.Unstructured
	for _, o := range r.Objects {
		if o.GroupVersionKind() == gvk && (ns == "" || o.GetNamespace() == ns) {
			out = append(out, *o.DeepCopy())
		}
	}
	return out, nil
}
