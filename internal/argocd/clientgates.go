package argocd

import (
	"maps"
	"os"
	"strconv"

	clientfeatures "k8s.io/client-go/features"
)

// clientGates answers client-go's feature gates as client-go answers them
// by default: each gate's latest default in the client-go module linked,
// overridden by a KUBE_FEATURE_<name> environment variable unless the gate
// is locked (client-go features/envvar.go).
//
// It exists because k8s.io/kubernetes/pkg/features, linked for the scheme
// defaults (defaults.go), hands client-go's gates to Kubernetes' feature
// gate in its init (clientfeatures.ReplaceFeatureGates), and the init below
// makes that gate emulate ArgoKubernetesVersion: every informer of this
// binary then ran as a 1.34 client. WatchListClient (on from 1.35) was
// off, so serve's informers LISTed each kind whole and held the decoded
// list before their transform (peak RSS 273 MB at 10,000 objects instead
// of ~80, issue 35; hack/bench-serve.sh).
type clientGates map[clientfeatures.Feature]clientfeatures.FeatureSpec

// Add records client-go's gates (clientfeatures.Registry).
func (g clientGates) Add(specs map[clientfeatures.Feature]clientfeatures.FeatureSpec) error {
	maps.Copy(g, specs)
	return nil
}

// Enabled answers as client-go's default gates (clientfeatures.Gates).
func (g clientGates) Enabled(key clientfeatures.Feature) bool {
	spec, ok := g[key]
	if !ok {
		return false
	}
	if !spec.LockToDefault {
		if v, set := os.LookupEnv("KUBE_FEATURE_" + string(key)); set {
			if on, err := strconv.ParseBool(v); err == nil {
				return on
			}
		}
	}
	return spec.Default
}

// restoreClientGates gives client-go its own gates back (see clientGates).
func restoreClientGates() {
	g := clientGates{}
	_ = clientfeatures.AddFeaturesToExistingFeatureGates(g) // Add never fails
	clientfeatures.ReplaceFeatureGates(g)
}
