package compare_test

// The engines register their field managers (engine.Register); this
// package's tests recognise argocd-controller, kustomize-controller...
// as the binaries do.
// They also hand their compare semantics to this package's own tests.
import (
	"github.com/kubectl-drift/kubectl-drift/internal/compare"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	_ "github.com/kubectl-drift/kubectl-drift/internal/engines"
)

func init() { compare.SetTestEngines(engine.CompareEngines()) }
