package audit

import (
	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
)

// testExtractors are the engine adapters' RulesFromDocuments, as the
// command wires them.
func testExtractors() []Extractor {
	return []Extractor{argocd.RulesFromDocuments, flux.RulesFromDocuments}
}

// testEngines are what the shipped engines tell the audit, as the command
// wires them (engine.AuditEngines).
func testEngines() []auditapi.Engine {
	return []auditapi.Engine{*argocd.AuditSemantics(), *flux.AuditSemantics()}
}
