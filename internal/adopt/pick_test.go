package adopt

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// TestPick: without --field, the drifts an engine reverts or reports are
// adopted with the live values (a removed field as a removal) and those
// every engine leaves alone are not; --field takes a drift's field path
// or a JSON pointer into the live object, and says what is wrong with one
// that names neither.
func TestPick(t *testing.T) {
	live := map[string]any{"spec": map[string]any{"replicas": int64(5), "paused": true},
		"metadata": map[string]any{"labels": map[string]any{"team": "x"}}}
	r := &model.Report{Drifts: []model.FieldDrift{
		{Path: "/spec/replicas", FieldPath: ".spec.replicas", Change: model.Changed,
			Verdicts: []model.Verdict{{Kind: model.LeftAlone}, {Kind: model.Reverted}}},
		{Path: "/spec/minReadySeconds", FieldPath: ".spec.minReadySeconds", Change: model.Removed,
			Verdicts: []model.Verdict{{Kind: model.Reported}}},
		{Path: "/metadata/labels/team", FieldPath: ".metadata.labels.team", Change: model.Added,
			Verdicts: []model.Verdict{{Kind: model.LeftAlone}}},
	}}
	got, err := Pick(r, live, nil)
	want := []Field{{Pointer: "/spec/replicas", Value: int64(5)}, {Pointer: "/spec/minReadySeconds", Remove: true}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Pick(no --field) = %+v, %v; want %+v", got, err, want)
	}
	got, err = Pick(r, live, []string{"metadata.labels.team", "/spec/paused"})
	want = []Field{{Pointer: "/metadata/labels/team", Value: "x"}, {Pointer: "/spec/paused", Value: true}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Pick(--field) = %+v, %v; want %+v", got, err, want)
	}
	for field, msg := range map[string]string{
		".spec.nope": "no drifted field has this path (drifted: .metadata.labels.team, .spec.minReadySeconds, .spec.replicas)",
		"/spec/nope": "the live object has no such field",
	} {
		if _, err := Pick(r, live, []string{field}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("Pick(--field %s) error = %v; want %q", field, err, msg)
		}
	}
}
