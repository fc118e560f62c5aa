// Package version holds the build's version, stamped with
// -ldflags "-X github.com/kubectl-drift/kubectl-drift/internal/version.gitVersion=v0.1.0 ..."
package version

import "fmt"

// Stamped at build time; the defaults describe an unstamped dev build.
var (
	gitVersion = "v0.0.0-dev"
	gitCommit  = "unknown"
	buildDate  = "unknown"
)

// String renders "v0.1.0 (commit abc123, built 2026-12-02T00:00:00Z)".
func String() string {
	return fmt.Sprintf("%s (commit %s, built %s)", gitVersion, gitCommit, buildDate)
}

// Version returns the semantic version alone.
func Version() string { return gitVersion }
