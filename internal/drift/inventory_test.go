package drift

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// cleanLive is a live object only a GitOps engine wrote (kustomize-
// controller's apply, from the real API server): inference finds no drift.
func cleanLive(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	live := liveObject(t, "deployment-kubectl-edits-live.yaml")
	testutil.KeepManagers(live, func(m string) bool { return m == "kustomize-controller" })
	return live
}

// inventoryJudge is a fakeAdapter that asks to judge clean objects
// (engine.InventoryJudge) and finds what its fields say.
type inventoryJudge struct {
	fakeAdapter
	asks   bool
	finds  *model.FieldDrift
	status *model.ObjectStatus
}

var _ engine.InventoryJudge = (*inventoryJudge)(nil)

func (j *inventoryJudge) JudgeClean(*unstructured.Unstructured) bool { return j.asks }
func (j *inventoryJudge) Judge(ctx context.Context, in model.JudgeInput) error {
	if j.finds != nil {
		in.Report.Drifts = append(in.Report.Drifts, *j.finds)
	}
	if j.status != nil {
		in.Report.SetStatus(*j.status)
	}
	return j.fakeAdapter.Judge(ctx, in)
}

// TestInventoryJudgesCleanOnlyWhenAsked: scan's mode skips the adapters on
// an object inference found clean, unless one is an engine.InventoryJudge
// that asks; the report is kept only when that judging found drift (a
// field deleted live, or an object status that is drift).
func TestInventoryJudgesCleanOnlyWhenAsked(t *testing.T) {
	deleted := &model.FieldDrift{Path: "/spec/template/spec/containers/0/resources", Change: model.Removed}
	outOfSync := &model.ObjectStatus{Engine: "toy", Drift: true, Status: "OutOfSync", From: "recorded"}
	synced := &model.ObjectStatus{Engine: "toy", Status: "Synced", From: "computed"}
	cases := []struct {
		name    string
		adapter model.Adapter
		judged  func() int
		want    bool // a report
	}{
		// The capability is optional: an adapter without it (as the toy
		// engine, internal/enginetest) is not judged on a clean object.
		{name: "adapter without the capability", want: false},
		{name: "does not ask", adapter: &inventoryJudge{fakeAdapter: fakeAdapter{engine: "toy"}, finds: deleted}, want: false},
		{name: "asks, finds nothing", adapter: &inventoryJudge{fakeAdapter: fakeAdapter{engine: "toy"}, asks: true, status: synced}, want: false},
		{name: "asks, finds a field deleted live", adapter: &inventoryJudge{fakeAdapter: fakeAdapter{engine: "toy"}, asks: true, finds: deleted}, want: true},
		{name: "asks, status OutOfSync", adapter: &inventoryJudge{fakeAdapter: fakeAdapter{engine: "toy"}, asks: true, status: outOfSync}, want: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := c.adapter
			plain := &fakeAdapter{engine: "toy"}
			if a == nil {
				a = plain
			}
			req := Request{Live: cleanLive(t), Engine: "auto", Inventory: true, Adapters: []model.Adapter{a}}
			rep, err := Explain(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if (rep != nil) != c.want {
				t.Fatalf("report %+v, want one: %v", rep, c.want)
			}
			judged, wantJudged := plain.judged, 0
			if j, ok := a.(*inventoryJudge); ok && j.asks {
				judged, wantJudged = j.judged, 1
			} else if ok {
				judged = j.judged
			}
			if judged != wantJudged {
				t.Errorf("judged %d times, want %d", judged, wantJudged)
			}
			if rep != nil && !rep.HasDrift() {
				t.Errorf("kept a report without drift: %+v", rep)
			}
		})
	}
	// The same object explained (not inventory) is judged whatever the
	// adapter says: the capability only widens a scan.
	plain := &fakeAdapter{engine: "toy"}
	if _, err := Explain(context.Background(), Request{Live: cleanLive(t), Engine: "auto", Adapters: []model.Adapter{plain}}); err != nil || plain.judged != 1 {
		t.Errorf("explain judged %d times (err %v), want 1", plain.judged, err)
	}
}
