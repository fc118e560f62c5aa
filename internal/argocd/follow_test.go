package argocd

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// withStatus is app recording live's sync status, at resourceVersion rv.
func withStatus(app, live *unstructured.Unstructured, status, rv string) *unstructured.Unstructured {
	out := app.DeepCopy()
	gvk := live.GroupVersionKind()
	_ = unstructured.SetNestedSlice(out.Object, []any{map[string]any{
		"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind,
		"namespace": live.GetNamespace(), "name": live.GetName(), "status": status}}, "status", "resources")
	out.SetResourceVersion(rv)
	return out
}

// TestUpdateOwnerFollowsStatus: an adapter that read its Application from
// the cluster (as scan --watch and serve build it) judges with each later
// version UpdateOwner hands it: 1000 updates of one Application's
// recorded status, OutOfSync and Synced in turn, each change naming the
// object, each verdict following it (the precheck's JudgeClean and the
// pipeline's status), and the adapter keeps one Application, one OutOfSync
// index and at most one compiled rule set whatever the number of updates.
func TestUpdateOwnerFollowsStatus(t *testing.T) {
	app, live := synced(t)
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{withStatus(app, live, "Synced", "1")}}
	a, err := New(Options{Reader: reader, Inventory: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a.Load(ctx)
	// judge is explain's pipeline (a report even without drift).
	judge := func() *model.Report {
		t.Helper()
		rep, err := drift.Explain(ctx, drift.Request{Live: live.DeepCopy(), Engine: "auto", Adapters: []model.Adapter{a}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	syncStatus := func() model.ObjectStatus {
		t.Helper()
		st, _ := judge().StatusOf(Engine)
		return st
	}
	if a.JudgeClean(live) || syncStatus().Drift {
		t.Fatal("OutOfSync while the Application records Synced")
	}
	gets := reader.Gets
	for i := range 1000 {
		status := "OutOfSync"
		if i%2 == 1 {
			status = "Synced"
		}
		c := a.UpdateOwner(withStatus(app, live, status, fmt.Sprint(i+2)), false)
		if c.All || len(c.Objects) != 1 || c.Objects[0].Name != live.GetName() || c.Owner.Name != app.GetName() {
			t.Fatalf("update %d: change %+v, want the object named", i, c)
		}
		want := status == "OutOfSync"
		if got := a.JudgeClean(live); got != want {
			t.Fatalf("update %d (%s): JudgeClean %v", i, status, got)
		}
		if i%100 < 2 { // the whole pipeline, on both statuses
			if st := syncStatus(); st.Drift != want || (want && st.From != "Application status") {
				t.Fatalf("update %d (%s): status %+v", i, status, st)
			}
		}
	}
	a.mu.Lock()
	apps, indexes, compiled := len(a.apps), len(a.outOfSync), len(a.compiled)
	a.mu.Unlock()
	if apps != 1 || indexes != 1 || compiled > 1 {
		t.Errorf("after 1000 updates: %d Applications, %d OutOfSync indexes, %d compiled rule sets; want 1, 1, at most 1", apps, indexes, compiled)
	}
	if reader.Gets != gets {
		t.Errorf("%d reads of the cluster while following", reader.Gets-gets)
	}

	last := withStatus(app, live, "Synced", "1001")
	if c := a.UpdateOwner(last, false); c.Changed() {
		t.Errorf("the same resourceVersion again: %+v", c)
	}
	reconciled := withStatus(app, live, "Synced", "1002")
	_ = unstructured.SetNestedField(reconciled.Object, "2026-12-03T20:00:00Z", "status", "reconciledAt")
	if c := a.UpdateOwner(reconciled, false); c.Changed() {
		t.Errorf("a reconcile that changed no resource's status: %+v", c)
	}
	respec := withStatus(app, live, "Synced", "1003")
	_ = unstructured.SetNestedField(respec.Object, map[string]any{"automated": map[string]any{"selfHeal": true}}, "spec", "syncPolicy")
	if c := a.UpdateOwner(respec, false); !c.All {
		t.Errorf("sync policy changed: %+v, want every object", c)
	}
	if o := a.Owner(live); o == nil || !o.SelfHeal {
		t.Errorf("owner after the spec change: %+v, want self-heal", o)
	}
	if c := a.UpdateOwner(respec, true); !c.All {
		t.Errorf("deleted: %+v, want every object", c)
	}
	if rep := judge(); len(rep.Owners) != 1 || !rep.Owners[0].Missing || reader.Gets != gets {
		t.Errorf("after the delete: owners %+v, %d reads; want the Application missing, read from nowhere", rep.Owners, reader.Gets-gets)
	}
}

// TestUpdateOwnerReplacesDestination: serve and scan --watch follow an
// Application whose destination moves (a spoke's app brought back to the
// cluster Argo CD runs on, and away again): its objects here are its own
// or not by the destination of the copy handed in last, not by the one
// matched when the adapter was built.
func TestUpdateOwnerReplacesDestination(t *testing.T) {
	a := localHub(t, true)
	obj := spokeObject("cm", "spoke-by-server")
	here := map[string]any{"server": InClusterServer, "namespace": "shop"}
	away := map[string]any{"server": "https://spoke.example.com:6443", "namespace": "shop"}
	checkPlacement(t, a, obj, "spoke-by-server", "", "destination-mismatch", "https://spoke.example.com:6443", false)
	for i, dest := range []map[string]any{here, away, here} {
		app := hubApp("spoke-by-server", dest)
		app.SetResourceVersion(fmt.Sprint(i + 10))
		if c := a.UpdateOwner(app, false); !c.All {
			t.Fatalf("update %d: a destination change is %+v, want every object", i, c)
		}
		// Owner first, as scan's inventory asks it (remoteNotes, which
		// explain asks first, matches the destination again).
		if o := a.Owner(obj); (o != nil) != (dest["server"] == InClusterServer) {
			t.Errorf("update %d: Owner = %+v for destination %v", i, o, dest)
		}
		if dest["server"] == InClusterServer {
			checkPlacement(t, a, obj, "spoke-by-server", InClusterServer, "", "", true)
		} else {
			checkPlacement(t, a, obj, "spoke-by-server", "", "destination-mismatch", "https://spoke.example.com:6443", false)
		}
	}
}
