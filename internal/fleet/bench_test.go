package fleet

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// A fleet scan of 3 clusters × N objects, clusters scanned one after the
// other (--max-concurrent-clusters 1) and at once (3). The clusters are
// fakes serving Deployments captured from the real API server
// (internal/scan/testdata, clean and drifted ones), each LIST page after a
// round-trip latency, which is what concurrency across clusters hides.
// Run with: go test -run=^$ -bench=Fleet ./internal/fleet/

const (
	benchPage    = 500
	benchLatency = 20 * time.Millisecond
)

var benchKinds = []scan.Kind{{
	GVR:        schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
	GVK:        schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
	Namespaced: true,
}}

// latencySource serves n objects per kind in pages of benchPage, each page
// after benchLatency; it counts the LISTs (one per kind, whatever n).
type latencySource struct {
	items [][]byte
	n     int
	mu    sync.Mutex
	lists int
}

func (s *latencySource) List(ctx context.Context, _ scan.Kind, _, _ string, fn func([]byte) error) (string, error) {
	s.mu.Lock()
	s.lists++
	s.mu.Unlock()
	for i := 0; i < s.n; i++ {
		if i%benchPage == 0 {
			select {
			case <-time.After(benchLatency):
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		if err := fn(s.items[i%len(s.items)]); err != nil {
			return "", err
		}
	}
	return "1", nil
}

func capturedDeployments(b *testing.B) [][]byte {
	b.Helper()
	return testutil.ListItems(b, "..", "scan", "testdata", "list-deployments.json")
}

// fleetOf returns the scan function over one fake source per cluster (each
// cluster with its own adapters, as the CLI builds them) and the sources.
func fleetOf(b *testing.B, clusters, n int) ([]Target, ScanFunc, map[string]*latencySource) {
	items := capturedDeployments(b)
	srcs := map[string]*latencySource{}
	var targets []Target
	for i := range clusters {
		name := fmt.Sprintf("c%d", i)
		srcs[name] = &latencySource{items: items, n: n}
		targets = append(targets, Target{Context: name})
	}
	fn := func(ctx context.Context, t Target) (*scan.Result, error) {
		argo, err := argocd.New(argocd.Options{})
		if err != nil {
			return nil, err
		}
		fl, err := flux.New(flux.Options{})
		if err != nil {
			return nil, err
		}
		return scan.Run(ctx, srcs[t.Context], scan.Options{Kinds: benchKinds, Inspector: &scan.Inspector{Adapters: []model.Adapter{argo, fl}}})
	}
	return targets, fn, srcs
}

func runFleet(b *testing.B, targets []Target, fn ScanFunc, srcs map[string]*latencySource, conc int) time.Duration {
	b.Helper()
	for _, s := range srcs {
		s.lists = 0
	}
	start := time.Now()
	res := Run(context.Background(), targets, conc, fn)
	d := time.Since(start)
	if res.Unreachable() != 0 || res.Stats.Drifted == 0 {
		b.Fatalf("fleet scan: %d unreachable, %d drifted; want all scanned, drift found: %q", res.Unreachable(), res.Stats.Drifted, res.Warnings)
	}
	for name, s := range srcs {
		if s.lists != len(benchKinds) {
			b.Fatalf("cluster %s: %d LISTs, want one per kind (%d)", name, s.lists, len(benchKinds))
		}
	}
	return d
}

// BenchmarkFleetScan reports the wall time of each mode and, as
// seq/conc, how many times faster the concurrent scan is.
func BenchmarkFleetScan(b *testing.B) {
	for _, n := range []int{300, 3000} {
		b.Run(fmt.Sprintf("3x%d", n), func(b *testing.B) {
			targets, fn, srcs := fleetOf(b, 3, n)
			var seq, conc time.Duration
			for b.Loop() {
				seq += runFleet(b, targets, fn, srcs, 1)
				conc += runFleet(b, targets, fn, srcs, 3)
			}
			b.ReportMetric(float64(seq.Milliseconds())/float64(b.N), "seq-ms/op")
			b.ReportMetric(float64(conc.Milliseconds())/float64(b.N), "conc-ms/op")
			b.ReportMetric(float64(seq)/float64(conc), "seq/conc")
			b.ReportMetric(float64(len(benchKinds)), "lists/cluster")
		})
	}
}
