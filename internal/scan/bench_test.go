package scan

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// Per-object cost of a scan, on objects captured from the real API server
// (testdata/capture.sh). Run with: go test -run=^$ -bench=. ./internal/scan/
// hack/bench-scan.sh measures the whole command against a cluster.

func itemRaw(b testing.TB, file, name string) []byte {
	b.Helper()
	for _, it := range testutil.ListItems(b, "testdata", file) {
		var md struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := json.Unmarshal(it, &md); err != nil {
			b.Fatal(err)
		}
		if md.Metadata.Name == name {
			return it
		}
	}
	b.Fatalf("%s: no item %s", file, name)
	return nil
}

// BenchmarkPrecheckClean is the path most objects take: metadata-only
// decode, ownership, manager check; no full decode.
func BenchmarkPrecheckClean(b *testing.B) {
	raw := itemRaw(b, "list-deployments.json", "web-clean")
	in := bothEngines(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		cand, owned, err := in.Precheck(kindDeployments, raw)
		if err != nil || cand != nil || !owned {
			b.Fatalf("cand=%v owned=%v err=%v", cand, owned, err)
		}
	}
}

// BenchmarkParseClassifyLeaves isolates the managedfields work on one
// decoded Deployment: Parse (FieldsV1 sets), Leaves, Classify per owner.
func BenchmarkParseClassifyLeaves(b *testing.B) {
	raw := itemRaw(b, "list-deployments.json", "web-scaled")
	obj, err := Decode(kindDeployments, raw)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ix, err := managedfields.Parse(obj)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, l := range ix.Leaves(obj) {
			for _, o := range l.Owners {
				if managedfields.Classify(o.Manager, o.Operation, o.Subresource) != "" {
					n++
				}
			}
		}
		if n == 0 {
			b.Fatal("no owned leaves")
		}
	}
}

// BenchmarkRunShop scans the captured namespace (9 objects, 3 kinds)
// end to end without a network: the engine's overhead per LIST.
func BenchmarkRunShop(b *testing.B) {
	src := shopSource()
	in := bothEngines(b)
	kinds := []Kind{kindConfigMaps, kindSecrets, kindDeployments}
	b.ReportAllocs()
	for b.Loop() {
		src.mu.Lock()
		src.lists = src.lists[:0]
		src.mu.Unlock()
		if _, err := Run(context.Background(), src, Options{Kinds: kinds, Inspector: in}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInspectDrifted is the full path of a drifted object: decode,
// managedFields parse, leaves, classification, report, and the owning
// engine's verdicts (the real adapters, offline: no reads).
func BenchmarkInspectDrifted(b *testing.B) {
	for _, tc := range []struct{ file, name string }{
		{"list-deployments.json", "web-scaled"}, // Flux-owned
		{"list-configmaps.json", "cfg-patched"}, // Argo CD-owned
	} {
		b.Run(tc.name, func(b *testing.B) {
			raw := itemRaw(b, tc.file, tc.name)
			argo, err := argocd.New(argocd.Options{Inventory: true})
			if err != nil {
				b.Fatal(err)
			}
			fl, err := flux.New(flux.Options{})
			if err != nil {
				b.Fatal(err)
			}
			in := &Inspector{Adapters: []model.Adapter{argo, fl}}
			kind := kindDeployments
			if tc.file == "list-configmaps.json" {
				kind = kindConfigMaps
			}
			var mu sync.Mutex
			b.ReportAllocs()
			for b.Loop() {
				rep, _, _, err := in.inspect(context.Background(), &mu, kind, raw)
				if err != nil || rep == nil || len(rep.Drifts[0].Verdicts) == 0 {
					b.Fatalf("rep=%v err=%v", rep, err)
				}
			}
		})
	}
}
