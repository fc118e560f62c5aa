package managedfields_test

// The engines register their field managers (engine.Register); this
// package's tests recognise argocd-controller, kustomize-controller...
// as the binaries do.
import _ "github.com/kubectl-drift/kubectl-drift/internal/engines"
