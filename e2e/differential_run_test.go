//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/e2e/differential"
)

// generated runs the generated cases of one backend (Flux Kustomization,
// HelmRelease, Argo CD) the same way: each case in its own parallel
// subtest, its failures reported, minimized on request, its result kept
// for the summary.
type generated struct {
	engine    string
	run       func(*testing.T, differential.Scenario) diffResult
	minimize  bool
	saveIssue uint64

	mu      sync.Mutex
	results []diffResult
}

// newGenerated reads the minimization settings from the environment
// (hack/differential.sh sets them).
func newGenerated(t *testing.T, engine string, run func(*testing.T, differential.Scenario) diffResult) *generated {
	t.Helper()
	return &generated{
		engine:    engine,
		run:       run,
		minimize:  os.Getenv("DRIFT_DIFFERENTIAL_MINIMIZE") != "",
		saveIssue: envUint(t, "DRIFT_DIFFERENTIAL_SAVE_ISSUE", 0),
	}
}

// caseAttempts bounds the runs of one case whose harness did not finish.
const caseAttempts = 2

// Case runs sc in a parallel subtest of t. A run the harness could not
// finish (a controller that did not answer in time on a loaded machine:
// t.Fatal inside run) leaves no result; the case then runs once more, in
// a fresh namespace, so that one slow answer neither drops the case from
// the count the CI slice checks nor passes as agreement. The failed
// attempt stays in the log (and fails the test); the summary counts the
// attempt that finished.
func (g *generated) Case(t *testing.T, sc differential.Scenario) {
	t.Run(fmt.Sprintf("seed-%d", sc.Seed), func(t *testing.T) {
		t.Parallel()
		var (
			res  diffResult
			done bool
		)
		for i := 1; i <= caseAttempts && !done; i++ {
			t.Run(fmt.Sprintf("attempt-%d", i), func(t *testing.T) {
				res = g.run(t, sc)
				done = true
			})
			if !done {
				t.Logf("%s: attempt %d did not finish (see its failure above)", sc, i)
			}
		}
		if !done {
			return
		}
		fails := res.failing()
		for _, f := range fails {
			t.Errorf("%s: %s", sc, f)
		}
		if len(fails) > 0 && g.minimize {
			minimizeCase(t, g.engine, sc, fails, g.saveIssue, func(s differential.Scenario) []string {
				return g.run(t, s).failing()
			})
		}
		g.mu.Lock()
		g.results = append(g.results, res)
		g.mu.Unlock()
	})
}

// Results are the finished cases' results (call after the cases' parent
// subtest returned: its parallel subtests have ended).
func (g *generated) Results() []diffResult {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.results
}
