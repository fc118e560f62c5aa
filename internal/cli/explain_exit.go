package cli

import (
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// explainExitCode is 1 when the object drifted, 0 when not. When the
// selected engine's own status of the object decides (Argo CD's sync
// status, read from its API or computed), fields it does not count (a
// live-only label, a field hidden by a rule) are shown but exit 0.
func explainExitCode(selected string, r *model.Report) int {
	if d, ok := engine.Lookup(selected); ok && d.StatusDecidesExit {
		if s, ok := r.StatusOf(d.Name); ok {
			if s.Drift {
				return ExitDrift
			}
			return 0
		}
	}
	return r.ExitCode()
}
