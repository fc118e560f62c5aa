package audit

import (
	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	// The shipped engines, registered as in the binaries.
	_ "github.com/kubectl-drift/kubectl-drift/internal/engines"
)

// testExtractors are the registered engines' RulesFromDocuments, as the
// command wires them.
func testExtractors() []Extractor {
	var out []Extractor
	for _, d := range engine.All() {
		out = append(out, d.RulesFromDocuments)
	}
	return out
}

// testEngines are what the registered engines tell the audit, as the
// command wires them.
func testEngines() []auditapi.Engine { return engine.AuditEngines() }
