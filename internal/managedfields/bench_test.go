package managedfields

import (
	"testing"
)

// The scan command parses and walks every object of a kind; these measure
// the per-object cost on a real Deployment with 7 managers (kustomize-
// controller's apply, then scale, set image, patch, label, annotate, edit).

func BenchmarkParse(b *testing.B) {
	obj := loadFixture(b, "deployment-ssa-then-kubectl-drifted.yaml")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(obj); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLeaves(b *testing.B) {
	obj := loadFixture(b, "deployment-ssa-then-kubectl-drifted.yaml")
	ix := mustParse(b, obj)
	b.ReportAllocs()
	for b.Loop() {
		// The walk itself: Leaves would answer from its memo.
		if len(ix.walkLeaves(obj)) == 0 {
			b.Fatal("no leaves")
		}
	}
}

func BenchmarkParseAndLeaves(b *testing.B) {
	obj := loadFixture(b, "deployment-ssa-then-kubectl-drifted.yaml")
	b.ReportAllocs()
	for b.Loop() {
		ix, err := Parse(obj)
		if err != nil {
			b.Fatal(err)
		}
		if len(ix.Leaves(obj)) == 0 {
			b.Fatal("no leaves")
		}
	}
}

func BenchmarkOwners(b *testing.B) {
	obj := loadFixture(b, "deployment-ssa-then-kubectl-drifted.yaml")
	ix := mustParse(b, obj)
	b.ReportAllocs()
	for b.Loop() {
		if len(ix.Owners(obj, "/spec/template/spec/containers/1/image")) != 1 {
			b.Fatal("wrong owners")
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	managers := []struct{ m, op, sub string }{
		{"kustomize-controller", "Apply", ""}, {"kubectl", "Update", "scale"}, {"kubectl-set", "Update", ""},
		{"kube-controller-manager", "Update", "scale"}, {"cert-manager-cainjector", "Update", ""}, {"Go-http-client", "Update", ""},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range managers {
			_ = Classify(m.m, m.op, m.sub)
		}
	}
}
