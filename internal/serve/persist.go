package serve

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ownerGVK is the engine object of an owner (engine.OwnerKind).
func ownerGVK(o model.Owner) (schema.GroupVersionKind, bool) {
	k, ok := engine.OwnerKindOf(o.Engine, o.Kind)
	return k.GVK, ok
}

// reconciledAt is the owner's last reconcile its status records: Flux's
// status.lastHandledReconcileAt (the reconcile.fluxcd.io/requestedAt value
// the controller handled, fluxcd/pkg apis/meta ReconcileRequestStatus) or
// Argo CD's status.reconciledAt and status.operationState.finishedAt
// (argo-cd pkg/apis/application/v1alpha1 ApplicationStatus), the latest.
func reconciledAt(obj *unstructured.Unstructured) time.Time {
	var latest time.Time
	for _, path := range [][]string{
		{"status", "lastHandledReconcileAt"},
		{"status", "reconciledAt"},
		{"status", "operationState", "finishedAt"},
	} {
		v, ok, _ := unstructured.NestedString(obj.Object, path...)
		if !ok {
			continue
		}
		for _, layout := range []string{time.RFC3339Nano, time.RFC3339} {
			if t, err := time.Parse(layout, v); err == nil {
				if t.After(latest) {
					latest = t
				}
				break
			}
		}
	}
	return latest
}

// persistState follows one drifted field: when its culprit wrote it, the
// last owner reconcile counted, and how many were.
type persistState struct {
	write   time.Time
	lastRec time.Time
	count   int
}

// persisted sets PersistedReconciles on rep's drifts from the owners'
// reconcile times (read from the owner informers) and the state kept per
// field; fields no longer drifted are forgotten. Called from Observe.
func (s *Server) persisted(ctx context.Context, rep *model.Report, key string, now time.Time) {
	var rec time.Time
	if rep != nil && s.opts.Owners != nil {
		for _, o := range rep.Owners {
			gvk, ok := ownerGVK(o)
			if !ok || !o.Found {
				continue
			}
			obj, err := s.opts.Owners.Get(ctx, gvk, o.Namespace, o.Name)
			if err != nil {
				continue
			}
			if t := reconciledAt(obj); t.After(rec) {
				rec = t
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fields := s.persist[key]
	if rep == nil {
		delete(s.persist, key)
		return
	}
	next := map[string]*persistState{}
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		write := now
		if m := s.pipe.Load().Culprit(*d); m.Time != nil {
			write = *m.Time
		}
		st := fields[d.Path]
		if st == nil || !st.write.Equal(write) {
			st = &persistState{write: write} // a new write starts over
		}
		// managedFields times have one-second resolution: a reconcile in
		// the same second as the write is not counted as after it.
		if rec.After(write.Truncate(time.Second).Add(time.Second-1)) && !rec.Equal(st.lastRec) {
			st.count++
			st.lastRec = rec
		}
		d.PersistedReconciles = st.count
		next[d.Path] = st
	}
	if len(next) == 0 {
		delete(s.persist, key)
		return
	}
	s.persist[key] = next
}
