package drift

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// The live objects are the ones explain's tests use: saved from the real
// API server of hack/cluster.sh after real kubectl operations.
func liveObject(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	return testutil.ReadObject(t, "..", "cli", "testdata", "explain", name)
}

// fakeAdapter owns everything, judges every drift "reverted" or fails.
type fakeAdapter struct {
	engine model.Engine
	fail   error
	judged int
}

func (f *fakeAdapter) Engine() model.Engine { return f.engine }
func (f *fakeAdapter) Owner(*unstructured.Unstructured) *model.Owner {
	return &model.Owner{Engine: f.engine, Kind: "Toy", Name: "owner"}
}
func (f *fakeAdapter) Rules(context.Context) ([]model.Rule, error) { return nil, nil }
func (f *fakeAdapter) Judge(_ context.Context, in model.JudgeInput) error {
	f.judged++
	if f.fail != nil {
		return f.fail
	}
	for i := range in.Report.Drifts {
		in.Report.Drifts[i].Verdicts = append(in.Report.Drifts[i].Verdicts, model.Verdict{Engine: f.engine, Kind: model.Reverted})
	}
	return nil
}

func TestExplainInfersAttributesAndJudges(t *testing.T) {
	live := liveObject(t, "deployment-kubectl-edits-live.yaml")
	a := &fakeAdapter{engine: "toy"}
	r, err := Explain(context.Background(), Request{Live: live, Engine: "auto", Adapters: []model.Adapter{a}})
	if err != nil {
		t.Fatal(err)
	}
	if r.DesiredSource != model.SourceManagedFields || len(r.Drifts) == 0 || a.judged != 1 {
		t.Fatalf("source %s, %d drifts, judged %d times; want inferred drift judged once", r.DesiredSource, len(r.Drifts), a.judged)
	}
	for _, d := range r.Drifts {
		if d.Cause != model.CauseManual || d.FieldPath == "" || len(d.Verdicts) != 1 {
			t.Errorf("%s: cause %s, %d verdicts; want manual, one verdict", d.Path, d.Cause, len(d.Verdicts))
		}
	}
}

func TestExplainJudgeFailure(t *testing.T) {
	live := liveObject(t, "deployment-kubectl-edits-live.yaml")
	boom := errors.New("boom")
	r, err := Explain(context.Background(), Request{Live: live, Engine: "toy", Adapters: []model.Adapter{&fakeAdapter{engine: "toy", fail: boom}}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range r.Notes {
		found = found || (n.Reason == "judge-failed" && n.Level == model.NoteError && strings.Contains(n.Message, "boom"))
	}
	if !found {
		t.Errorf("notes %+v: want a judge-failed error note", r.Notes)
	}

	// A scan gets the failure as a warning, not a note.
	var got []string
	r, err = Explain(context.Background(), Request{Live: live, Engine: "auto", Inventory: true,
		Adapters:    []model.Adapter{&fakeAdapter{engine: "toy", fail: boom}},
		JudgeFailed: func(e model.Engine, err error) { got = append(got, string(e)+": "+err.Error()) }})
	if err != nil || r == nil {
		t.Fatalf("Explain = %v, %v", r, err)
	}
	if len(got) != 1 || got[0] != "toy: boom" {
		t.Errorf("JudgeFailed got %q", got)
	}
	for _, n := range r.Notes {
		if n.Reason == "judge-failed" {
			t.Errorf("inventory report has a judge-failed note: %+v", n)
		}
	}
}

func TestExplainInventorySkipsObjectsNoEngineWrote(t *testing.T) {
	live := liveObject(t, "deployment-no-gitops-live.yaml")
	a := &fakeAdapter{engine: "toy"}
	r, err := Explain(context.Background(), Request{Live: live, Engine: "auto", Inventory: true, Adapters: []model.Adapter{a}})
	if err != nil || r != nil || a.judged != 0 {
		t.Errorf("Explain = %v, %v, judged %d; want no report and no judging", r, err, a.judged)
	}
	// explain reports the same object, with a note saying why nothing drifted.
	r, err = Explain(context.Background(), Request{Live: live, Engine: "auto", Adapters: []model.Adapter{a}})
	if err != nil || r == nil || len(r.Drifts) != 0 || len(r.Notes) == 0 {
		t.Errorf("Explain = %+v, %v; want an empty report with a note", r, err)
	}
}

func TestExplainBystanderOwner(t *testing.T) {
	live := liveObject(t, "deployment-kubectl-edits-live.yaml")
	r, err := Explain(context.Background(), Request{Live: live, Engine: "first", Bystanders: []model.Adapter{&fakeAdapter{engine: "other"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Owners) != 1 || !r.Owners[0].NotJudged || r.Owners[0].Engine != "other" {
		t.Errorf("owners %+v: want the bystander's, not judged", r.Owners)
	}
}

func TestExplainUndeterminedWithoutManagedFields(t *testing.T) {
	live := liveObject(t, "deployment-kubectl-edits-live.yaml")
	live.SetManagedFields(nil)
	r, err := Explain(context.Background(), Request{Live: live, Engine: "auto", Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Undetermined, "--show-managed-fields") {
		t.Errorf("Undetermined = %q; want the offline hint", r.Undetermined)
	}
}

// Under --engine auto the notes of an engine that does not reconcile the
// object are dropped, except one about the object itself: an Argo CD
// tracking id naming an Application that deploys to another cluster is
// what the user must see (nothing reconciles the object).
func TestAutoKeepsNotesAboutTheObject(t *testing.T) {
	live := liveObject(t, "deployment-kubectl-edits-live.yaml")
	notes := []model.Note{
		{Engine: "other", Level: model.NoteWarning, Reason: "no-settings", Message: "cannot read its settings"},
		{Engine: "other", Level: model.NoteWarning, Reason: "destination-mismatch", Message: "its owner deploys elsewhere", AboutObject: true},
		{Engine: "other", Level: model.NoteError, Reason: "bad-rules", Message: "a broken rules file"},
	}
	for _, tt := range []struct {
		engine string
		want   []string
	}{
		{"auto", []string{"bad-rules", "destination-mismatch"}},
		{"toy", []string{"bad-rules", "destination-mismatch", "no-settings"}},
	} {
		r, err := Explain(context.Background(), Request{Live: live, Engine: tt.engine, Adapters: []model.Adapter{&fakeAdapter{engine: "toy"}},
			Notes: append([]model.Note(nil), notes...)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range r.Notes {
			if n.Engine == "other" {
				got = append(got, n.Reason)
			}
		}
		sort.Strings(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("--engine %s: notes of the uninvolved engine %v, want %v", tt.engine, got, tt.want)
		}
	}
}
