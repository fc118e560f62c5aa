package diff

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCompareStatusOnlyWhenAskedAndDesiredSetsIt(t *testing.T) {
	obj := func(phase string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "e2e.drift.dev/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "ns"},
			"spec":     map[string]any{"size": int64(3)},
		}}
		if phase != "" {
			u.Object["status"] = map[string]any{"phase": phase}
		}
		return u
	}
	for _, tc := range []struct {
		name            string
		desired, live   string
		compare         bool
		wantStatusDrift bool
	}{
		{"status in Git, compared", "Ready", "Failed", true, true},
		{"status in Git, not asked", "Ready", "Failed", false, false},
		{"status live only", "", "Failed", true, false},
		{"equal status", "Ready", "Ready", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drifts, err := Compute(obj(tc.desired), obj(tc.live), Options{CompareStatus: tc.compare, Owned: func(string) bool { return false }})
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, d := range drifts {
				if d.Path == "/status/phase" {
					got = true
				}
			}
			if got != tc.wantStatusDrift {
				t.Errorf("status drift = %v, want %v (drifts %+v)", got, tc.wantStatusDrift, drifts)
			}
		})
	}
}
