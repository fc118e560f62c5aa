// Package audit reviews the drift-ignore rules written in a Git checkout
// (Argo CD ignoreDifferences and argocd-cm customizations, Flux
// Kustomization and HelmRelease ignore rules, ssa/reconcile annotations) the
// way a linter reviews code: every finding has a check ID, a severity, a
// one-line message, a fix hint and the file:line:column of the rule.
//
// The checks are pure functions over the rules (in the common model, as the
// engine adapters extract them) and the manifests found next to them; the
// package never parses Argo CD or Flux objects itself, so the rules it audits
// are exactly the rules the rest of kubectl-drift evaluates.
package audit
