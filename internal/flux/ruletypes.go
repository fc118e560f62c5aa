package flux

import "github.com/kubectl-drift/kubectl-drift/internal/model"

// Flux's rule types. The string values are part of the JSON and SARIF
// output (model.Rule.Type): never change them.
const (
	// RuleKustomizeIgnore: a Kustomization's spec.ignore entry
	// (kustomize-controller api/v1 IgnoreRule).
	RuleKustomizeIgnore model.RuleType = "flux.kustomization.ignore"
	// RuleHelmIgnore: a HelmRelease's spec.driftDetection.ignore entry.
	RuleHelmIgnore model.RuleType = "flux.helmrelease.driftDetection.ignore"
	// RuleSSAAnnotation: the kustomize.toolkit.fluxcd.io/ssa annotation.
	RuleSSAAnnotation model.RuleType = "flux.ssa"
	// RuleReconcileDisabled: kustomize.toolkit.fluxcd.io/reconcile: disabled.
	RuleReconcileDisabled model.RuleType = "flux.reconcileDisabled"
	// RuleDriftDisabled: a HelmRelease whose drift detection is off.
	RuleDriftDisabled model.RuleType = "flux.driftDetectionDisabled"
	// RulePruneDisabled: kustomize.toolkit.fluxcd.io/prune: disabled keeps
	// the object when it leaves the manifest (garbage collection only).
	RulePruneDisabled model.RuleType = "flux.pruneDisabled"
)
