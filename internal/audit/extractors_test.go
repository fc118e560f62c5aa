package audit

import (
	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
)

// testExtractors are the engine adapters' RulesFromDocuments, as the
// command wires them.
func testExtractors() []Extractor {
	return []Extractor{argocd.RulesFromDocuments, flux.RulesFromDocuments}
}
