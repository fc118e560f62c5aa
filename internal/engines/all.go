// Package engines registers every engine kubectl-drift ships: import it
// for its side effect. Adding an engine is one more line here.
//
// It lives beside the registry (internal/engine), not inside it: the
// registry knows no engine, and this package is the one place that names
// them all, for its only users, the command tree (internal/cli) and the
// tests that need the shipped engines registered.
package engines

import (
	// Each engine package registers its engine.Descriptor in init.
	_ "github.com/kubectl-drift/kubectl-drift/internal/argocd"
	_ "github.com/kubectl-drift/kubectl-drift/internal/flux"
)
