// Package flux is the Flux adapter: it reads Kustomizations and HelmReleases
// (typed, from kustomize-controller/api and helm-controller/api), the ssa /
// reconcile / prune / driftDetection marks on manifests, and decides per
// drifted field what kustomize-controller or helm-controller would do about
// it. Selector matching and ignore-path removal go through fluxcd/pkg/ssa's
// own jsondiff code so that rule matching is Flux's, not a re-implementation.
package flux

import (
	_ "github.com/fluxcd/helm-controller/api/v2"
	_ "github.com/fluxcd/kustomize-controller/api/v1"
	_ "github.com/fluxcd/pkg/ssa/jsondiff"
	_ "github.com/fluxcd/pkg/ssa/normalize"
	_ "github.com/fluxcd/pkg/ssa/utils"
	_ "sigs.k8s.io/controller-runtime/pkg/client"
)
