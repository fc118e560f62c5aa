package drift

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

// Rendered is --source's desired state (explain, scan, normalize): the
// engine object that applies a live object (named by its ownership marks,
// Renderer.Owner, or by the flags) is rendered from the checkout once, whatever the number of
// its objects asked about, and the live object's document in that render
// is its desired state, which then goes the way of a -f document. Safe for
// concurrent use (scan's workers).
type Rendered struct {
	env       *render.Env
	renderers []render.Renderer
	// override is the owner the flags name for explain and normalize,
	// whatever the marks say (an object without them).
	override *render.Ref
	// only limits scan to the owners the flags name (none: every owner).
	only []render.Ref

	mu     sync.Mutex
	cache  map[render.Ref]*renderedOwner
	counts RenderCounts
}

// RenderCounts are scan's summary of --source: objects compared with a
// render, objects whose owner failed to render, objects no renderer's
// owner applies.
type RenderCounts struct{ Compared, Failed, Unowned int }

type renderedOwner struct {
	objs []*unstructured.Unstructured
	err  error
}

// NewRendered renders from env with renderers (engine.Renderers of the
// engines' flags): override is the owner the flags name for every object
// (explain, normalize), only the owners scan is limited to.
func NewRendered(env *render.Env, renderers []render.Renderer, override *render.Ref, only []render.Ref) *Rendered {
	return &Rendered{env: env, renderers: renderers, override: override, only: only, cache: map[render.Ref]*renderedOwner{}}
}

// Close removes what rendering kept on disk (the trees of the revisions
// the sources named, render.Env.Close).
func (r *Rendered) Close() error { return r.env.Close() }

// NotRendered is the error of an object whose owner --source does not
// render (no renderer knows it, or scan's flags leave it out): scan infers
// its drift from managedFields, as without --source.
type NotRendered struct{ err error }

func (e *NotRendered) Error() string { return e.err.Error() }
func (e *NotRendered) Unwrap() error { return e.err }

// owner is the engine object that applies live.
func (s *Rendered) owner(ctx context.Context, live *unstructured.Unstructured) (render.Ref, error) {
	if s.override != nil {
		return *s.override, nil
	}
	ref, ok := render.OwnerOf(s.renderers, live)
	if !ok {
		// No owner: ForLive says so, with the flags that name one.
		_, _, err := render.ForLive(ctx, s.env, s.renderers, live, nil)
		return ref, &NotRendered{err}
	}
	if len(s.only) > 0 && !containsRef(s.only, ref) {
		return ref, &NotRendered{fmt.Errorf("its owner %s is not among the engine objects named", ref)}
	}
	return ref, nil
}

// containsRef: refs holds r (by group, kind, namespace and name; the
// version may differ).
func containsRef(refs []render.Ref, r render.Ref) bool {
	for _, x := range refs {
		if x.GVK.GroupKind() == r.GVK.GroupKind() && x.Namespace == r.Namespace && x.Name == r.Name {
			return true
		}
	}
	return false
}

// render returns the objects of ref, rendering it on first use. A render
// error names the engine object and, when the checkout holds it, its file.
func (s *Rendered) render(ctx context.Context, live *unstructured.Unstructured, ref render.Ref) ([]*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Renders run one at a time: they share the Env (its Secret scrubber
	// and cluster reader) and a scan has few owners for many objects.
	if r, ok := s.cache[ref]; ok {
		return r.objs, r.err
	}
	_, objs, err := render.ForLive(ctx, s.env, s.renderers, live, &ref)
	if f := s.fileOf(ref); err != nil && f != "" {
		err = fmt.Errorf("%w (%s is in %s)", err, ref.GVK.Kind, f)
	}
	s.cache[ref] = &renderedOwner{objs: objs, err: err}
	return objs, err
}

// fileOf is the checkout file that holds the engine object ref, relative
// to the checkout, or "".
func (s *Rendered) fileOf(ref render.Ref) string {
	for _, f := range s.env.Files {
		if containsRef([]render.Ref{ref}, render.RefOf(f)) {
			p := s.env.FileOf(f)
			if rel, err := filepath.Rel(s.env.Root, p); err == nil {
				return rel
			}
			return p
		}
	}
	return ""
}

// Desired returns live's document in its owner's render (a copy: the
// pipeline may change it), the owner, and the owner's rendered objects.
// namespace is where live objects without one are (explain's -n).
func (s *Rendered) Desired(ctx context.Context, live *unstructured.Unstructured, namespace string) (*unstructured.Unstructured, render.Ref, []*unstructured.Unstructured, error) {
	ref, err := s.owner(ctx, live)
	if err != nil {
		s.count(&s.counts.Unowned)
		return nil, ref, nil, err
	}
	objs, err := s.render(ctx, live, ref)
	if err != nil {
		s.count(&s.counts.Failed)
		return nil, ref, nil, err
	}
	obj, err := PickDocument(objs, live, namespace)
	if err != nil {
		s.count(&s.counts.Failed)
		return nil, ref, objs, fmt.Errorf("%s rendered from %s: %w", ref, s.env.Root, err)
	}
	s.count(&s.counts.Compared)
	return obj.DeepCopy(), ref, objs, nil
}

func (s *Rendered) count(n *int) {
	s.mu.Lock()
	*n++
	s.mu.Unlock()
}

// Counts returns how many objects were compared with a render, failed to
// render and had no owner --source renders.
func (s *Rendered) Counts() RenderCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}
