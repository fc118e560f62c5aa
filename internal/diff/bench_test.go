package diff

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// BenchmarkCompute compares the drifted real Deployment with its manifest,
// ownership answered from its 7 managedFields entries, as explain and scan
// do per object.
func BenchmarkCompute(b *testing.B) {
	desired := testutil.ReadObject(b, "testdata/deployment-kubectl-drifted-desired.yaml")
	live := testutil.ReadObject(b, "testdata/deployment-kubectl-drifted-live.yaml")
	owned := ownedBy(b, live)
	b.ReportAllocs()
	for b.Loop() {
		drifts, err := Compute(desired, live, Options{Owned: owned})
		if err != nil || len(drifts) != 7 {
			b.Fatalf("%d drifts, %v", len(drifts), err)
		}
	}
}

// BenchmarkComputeWithIndex: the same, the caller passing the Index it has.
func BenchmarkComputeWithIndex(b *testing.B) {
	desired := testutil.ReadObject(b, "testdata/deployment-kubectl-drifted-desired.yaml")
	live := testutil.ReadObject(b, "testdata/deployment-kubectl-drifted-live.yaml")
	ix, err := managedfields.Parse(live)
	if err != nil {
		b.Fatal(err)
	}
	owned := func(p string) bool { return len(ix.Owners(live, p)) > 0 }
	b.ReportAllocs()
	for b.Loop() {
		drifts, err := Compute(desired, live, Options{Owned: owned, Index: ix})
		if err != nil || len(drifts) != 7 {
			b.Fatalf("%d drifts, %v", len(drifts), err)
		}
	}
}
