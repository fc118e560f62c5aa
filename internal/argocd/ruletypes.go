package argocd

import "github.com/kubectl-drift/kubectl-drift/internal/model"

// Argo CD's rule types. The string values are part of the JSON and SARIF
// output (model.Rule.Type): never change them.
const (
	// RuleIgnoreDifferences: an Application's spec.ignoreDifferences entry
	// or an argocd-cm resource.customizations.ignoreDifferences key.
	RuleIgnoreDifferences model.RuleType = "argocd.ignoreDifferences"
	// RuleResourceExclusion: argocd-cm resource.exclusions hides whole
	// kinds from Argo CD.
	RuleResourceExclusion model.RuleType = "argocd.resourceExclusion"
	// RuleKnownTypeFields: argocd-cm resource.customizations.knownTypeFields.
	RuleKnownTypeFields model.RuleType = "argocd.knownTypeFields"
	// RuleIgnoreExtraneous: the argocd.argoproj.io/compare-options:
	// IgnoreExtraneous annotation.
	RuleIgnoreExtraneous model.RuleType = "argocd.ignoreExtraneous"
	// RuleCompareOptions: argocd-cm resource.compareoptions (the /status rule).
	RuleCompareOptions model.RuleType = "argocd.compareOptions"
)
