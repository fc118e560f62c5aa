// Package flux is the Flux adapter: it reads Kustomizations and HelmReleases
// (typed, from kustomize-controller/api and helm-controller/api), the ssa /
// reconcile / prune / driftDetection marks on manifests, and decides per
// drifted field what kustomize-controller or helm-controller would do about
// it. Selector matching and ignore-path removal go through fluxcd/pkg/ssa's
// own jsondiff code so that rule matching is Flux's, not a re-implementation.
package flux
