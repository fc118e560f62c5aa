package scan

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// CachingReader is the model.Reader a scan gives the adapters. Their Judge
// reads the engine objects behind each drifted object (the Kustomization
// named by its labels, the Application, argocd-cm): thousands of drifted
// objects share a handful of owners, so every distinct read is made once
// and remembered, errors included. The scan's own cost model (one LIST per
// kind) then holds up to the number of distinct owners.
type CachingReader struct {
	Reader model.Reader

	mu    sync.Mutex
	gets  map[getKey]getResult
	lists map[listKey]listResult
}

type getKey struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
}

type getResult struct {
	obj *unstructured.Unstructured
	err error
}

type listKey struct {
	gvk       schema.GroupVersionKind
	namespace string
	selector  string
}

type listResult struct {
	items []unstructured.Unstructured
	err   error
}

// NewCachingReader wraps r.
func NewCachingReader(r model.Reader) *CachingReader {
	return &CachingReader{Reader: r, gets: map[getKey]getResult{}, lists: map[listKey]listResult{}}
}

var _ model.Reader = (*CachingReader)(nil)

// Get implements model.Reader. Callers get a copy: adapters may mutate.
func (c *CachingReader) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	k := getKey{gvk, namespace, name}
	c.mu.Lock()
	r, ok := c.gets[k]
	c.mu.Unlock()
	if !ok {
		obj, err := c.Reader.Get(ctx, gvk, namespace, name)
		if ctx.Err() != nil {
			return obj, err // a cancelled read is not an answer to remember
		}
		r = getResult{obj: obj, err: err}
		c.mu.Lock()
		c.gets[k] = r
		c.mu.Unlock()
	}
	if r.obj == nil {
		return nil, r.err
	}
	return r.obj.DeepCopy(), r.err
}

// List implements model.Reader.
func (c *CachingReader) List(ctx context.Context, gvk schema.GroupVersionKind, namespace, labelSelector string) ([]unstructured.Unstructured, error) {
	k := listKey{gvk, namespace, labelSelector}
	c.mu.Lock()
	r, ok := c.lists[k]
	c.mu.Unlock()
	if !ok {
		items, err := c.Reader.List(ctx, gvk, namespace, labelSelector)
		if ctx.Err() != nil {
			return items, err
		}
		r = listResult{items: items, err: err}
		c.mu.Lock()
		c.lists[k] = r
		c.mu.Unlock()
	}
	out := make([]unstructured.Unstructured, len(r.items))
	for i := range r.items {
		r.items[i].DeepCopyInto(&out[i])
	}
	return out, r.err
}
