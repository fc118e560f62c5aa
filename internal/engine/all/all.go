// Package all registers every engine kubectl-drift ships: import it for
// its side effect. Adding an engine is one more line here.
package all

import (
	// Each engine package registers its engine.Descriptor in init.
	_ "github.com/kubectl-drift/kubectl-drift/internal/argocd"
	_ "github.com/kubectl-drift/kubectl-drift/internal/flux"
)
