package flux

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestUpdateOwnerFollowsSpec: the adapter resolves a Kustomization once
// and keeps it; in scan --watch and serve, UpdateOwner hands it each later
// version. Suspending it changes the verdict on its objects' drift (All);
// a status written by a reconcile (same generation) changes none; the
// cluster is not read again, and each Kustomization is held once.
func TestUpdateOwnerFollowsSpec(t *testing.T) {
	ks := obj(t, kustomization)
	ks.SetResourceVersion("1")
	ks.SetGeneration(1)
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{ks}}
	a := newTestAdapter(t, reader)
	live := liveDeployment(t, "api", "", "", fluxApplyAll+manualEdits)
	replicas := func() model.Verdict {
		t.Helper()
		return verdictAt(t, judge(t, a, live, nil, drift("/spec/replicas", model.Changed, 5, "kubectl-edit/Update")), "/spec/replicas")
	}
	if v := replicas(); v.Kind != model.Reverted {
		t.Fatalf("before: %+v, want reverted", v)
	}
	gets := reader.Gets
	for i := range 100 {
		next := ks.DeepCopy()
		next.SetResourceVersion(string(rune('a'+i%26)) + "x")
		next.SetGeneration(int64(2 + i))
		suspended := i%2 == 0
		_ = unstructured.SetNestedField(next.Object, suspended, "spec", "suspend")
		c := a.UpdateOwner(next, false)
		if !c.All || c.Owner.Ref() != "Kustomization flux-system/apps" {
			t.Fatalf("update %d: change %+v, want every object of the Kustomization", i, c)
		}
		v := replicas()
		if suspended != (v.Kind != model.Reverted) {
			t.Fatalf("update %d (suspend %v): %s %q", i, suspended, v.Kind, v.Reason)
		}
		status := next.DeepCopy()
		status.SetResourceVersion(next.GetResourceVersion() + "s")
		_ = unstructured.SetNestedField(status.Object, "2026-12-03T20:00:00Z", "status", "lastHandledReconcileAt")
		if c := a.UpdateOwner(status, false); c.Changed() {
			t.Fatalf("update %d: a status written by a reconcile changed %+v", i, c)
		}
	}
	if reader.Gets != gets {
		t.Errorf("%d reads of the cluster while following", reader.Gets-gets)
	}
	a.mu.Lock()
	held := len(a.owners)
	a.mu.Unlock()
	if held != 1 {
		t.Errorf("%d owners held, want 1", held)
	}
	if c := a.UpdateOwner(ks, true); !c.All {
		t.Errorf("deleted: %+v", c)
	}
	if rep := judge(t, a, live, nil, drift("/spec/replicas", model.Changed, 5, "kubectl-edit/Update")); len(rep.Owners) != 1 || !rep.Owners[0].Missing {
		t.Errorf("after the delete: owners %+v, want missing", rep.Owners)
	}
}
