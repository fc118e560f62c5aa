package diff

import (
	"testing"
)

// BenchmarkCompute compares the drifted real Deployment with its manifest,
// ownership answered from its 7 managedFields entries, as explain and scan
// do per object.
func BenchmarkCompute(b *testing.B) {
	desired := load(b, "testdata/deployment-kubectl-drifted-desired.yaml")
	live := load(b, "testdata/deployment-kubectl-drifted-live.yaml")
	owned := ownedBy(b, live)
	b.ReportAllocs()
	for b.Loop() {
		drifts, err := Compute(desired, live, Options{Owned: owned})
		if err != nil || len(drifts) != 7 {
			b.Fatalf("%d drifts, %v", len(drifts), err)
		}
	}
}
