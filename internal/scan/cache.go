package scan

import (
	"context"
	"errors"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// CachingReader is the model.Reader a scan gives the adapters. Their Judge
// reads the engine objects behind each drifted object (the Kustomization
// named by its labels, the Application, argocd-cm): thousands of drifted
// objects share a handful of owners. Every distinct read is made once and
// remembered, errors included; and a Get of an engine object (Argo CD's and
// Flux's own kinds) is answered from one LIST of that kind in all
// namespaces, so owners cost one request per engine kind, not one per
// owner. When that LIST is Forbidden (RBAC scoped to namespaces), Gets go
// to the server one by one.
type CachingReader struct {
	Reader model.Reader

	mu    sync.Mutex
	gets  map[getKey]answer[*unstructured.Unstructured]
	lists map[listKey]answer[[]unstructured.Unstructured]
	// byKind indexes the all-namespaces LIST of an engine kind by
	// namespace/name; a nil map means that LIST failed: plain Gets then.
	byKind map[schema.GroupVersionKind]map[string]*unstructured.Unstructured
}

// listBacked says which kinds are read with one LIST instead of a GET per
// object: the engines' own kinds, of which a cluster has tens to hundreds.
func listBacked(gvk schema.GroupVersionKind) bool {
	return engine.OwnsGroup(gvk.Group)
}

type getKey struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
}

type listKey struct {
	gvk       schema.GroupVersionKind
	namespace string
	selector  string
}

// answer is a remembered read: what it returned, error included.
type answer[T any] struct {
	val T
	err error
}

// remember makes a read once: later calls with the same key get the first
// answer. A cancelled read is not an answer to remember.
func remember[K comparable, T any](ctx context.Context, c *CachingReader, memo map[K]answer[T], k K, read func() (T, error)) answer[T] {
	c.mu.Lock()
	r, ok := memo[k]
	c.mu.Unlock()
	if ok {
		return r
	}
	v, err := read()
	r = answer[T]{val: v, err: err}
	if ctx.Err() == nil {
		c.mu.Lock()
		memo[k] = r
		c.mu.Unlock()
	}
	return r
}

// NewCachingReader wraps r.
func NewCachingReader(r model.Reader) *CachingReader {
	return &CachingReader{Reader: r, gets: map[getKey]answer[*unstructured.Unstructured]{}, lists: map[listKey]answer[[]unstructured.Unstructured]{},
		byKind: map[schema.GroupVersionKind]map[string]*unstructured.Unstructured{}}
}

var _ model.Reader = (*CachingReader)(nil)

// Get implements model.Reader. Callers get a copy: adapters may mutate.
func (c *CachingReader) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	if listBacked(gvk) {
		if obj, err, ok := c.fromList(ctx, gvk, namespace, name); ok {
			return obj, err
		}
	}
	r := remember(ctx, c, c.gets, getKey{gvk, namespace, name}, func() (*unstructured.Unstructured, error) {
		return c.Reader.Get(ctx, gvk, namespace, name)
	})
	if r.val == nil {
		return nil, r.err
	}
	return r.val.DeepCopy(), r.err
}

// List implements model.Reader.
func (c *CachingReader) List(ctx context.Context, gvk schema.GroupVersionKind, namespace, labelSelector string) ([]unstructured.Unstructured, error) {
	r := remember(ctx, c, c.lists, listKey{gvk, namespace, labelSelector}, func() ([]unstructured.Unstructured, error) {
		return c.Reader.List(ctx, gvk, namespace, labelSelector)
	})
	out := make([]unstructured.Unstructured, len(r.val))
	for i := range r.val {
		r.val[i].DeepCopyInto(&out[i])
	}
	return out, r.err
}

// fromList answers a Get from the kind's LIST; ok is false when that LIST
// could not be made (then the caller GETs).
func (c *CachingReader) fromList(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error, bool) {
	c.mu.Lock()
	idx, listed := c.byKind[gvk]
	c.mu.Unlock()
	if !listed {
		items, err := c.List(ctx, gvk, "", "")
		if ctx.Err() != nil {
			return nil, ctx.Err(), true
		}
		switch {
		case err == nil:
			idx = make(map[string]*unstructured.Unstructured, len(items))
			for i := range items {
				idx[items[i].GetNamespace()+"/"+items[i].GetName()] = &items[i]
			}
		case meta.IsNoMatchError(err) || isUnknownType(err):
			// The engine is not installed: every Get would say the same.
			return nil, err, true
		default:
			idx = nil // Forbidden at cluster scope, or a failure: GET one by one
		}
		c.mu.Lock()
		c.byKind[gvk] = idx
		c.mu.Unlock()
	}
	if idx == nil {
		return nil, nil, false
	}
	obj, found := idx[namespace+"/"+name]
	if !found {
		gr := schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
		return nil, apierrors.NewNotFound(gr, name), true
	}
	return obj.DeepCopy(), nil, true
}

func isUnknownType(err error) bool {
	var u *cluster.UnknownTypeError
	return errors.As(err, &u)
}
