package argocd

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// The API groups gitops-engine installs into the scheme whose defaulting
	// functions its diff runs (gitops-engine pkg/utils/kube/scheme/scheme.go,
	// at the commit argo-cd v3.2.11's go.mod pins). Each install package
	// registers its group's SetObjectDefaults_* functions in legacyscheme.
	_ "k8s.io/kubernetes/pkg/apis/admission/install"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/authentication/install"
	_ "k8s.io/kubernetes/pkg/apis/authorization/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/extensions/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/imagepolicy/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smpatch"
)

// ArgoKubernetesVersion is the minor version of k8s.io/kubernetes that
// Argo CD v3.2 links (argo-cd v3.2.11 go.mod: k8s.io/kubernetes v1.34.2).
// Its defaulting functions are the ones Argo CD's diff runs; some depend on
// feature gates whose defaults move between releases (StatefulSet
// updateStrategy.rollingUpdate.maxUnavailable is defaulted only when
// MaxUnavailableStatefulSet is on: off in 1.34, on from 1.37).
const ArgoKubernetesVersion = "1.34"

// init makes the feature gates of the k8s.io/kubernetes this module links
// (go.mod) answer as those of ArgoKubernetesVersion, the release Argo CD
// links: those gates are read only by the defaulting functions above (this
// binary runs no Kubernetes component). A module version too new to
// emulate 1.34 fails TestSchemeDefaultsAsArgo. client-go's own gates,
// which k8s.io/kubernetes/pkg/features ties to the same gate, are given
// back their defaults (clientGates): the informers are not Argo CD's.
func init() {
	_ = utilfeature.DefaultMutableFeatureGate.SetEmulationVersion(version.MustParse(ArgoKubernetesVersion))
	restoreClientGates()
}

// schemeDefaultPatch mirrors gitops-engine pkg/diff/diff.go
// generateSchemeDefaultPatch: the scheme's defaulting functions run on a
// copy of obj, and the difference is returned as a strategic merge patch
// ("{}" when defaulting changed nothing).
//
// Argo CD applies this to both sides of its client-side diffs (ThreeWayDiff
// via applyPatch, StructuredMergeDiff via normalizeTypedValue), so a field
// left out of Git that Kubernetes defaults (a NetworkPolicy port's
// protocol, a webhook rule's scope, a Deployment's revisionHistoryLimit)
// compares equal to the live default.
func schemeDefaultPatch(obj runtime.Object) ([]byte, error) {
	patched := obj.DeepCopyObject()
	legacyscheme.Scheme.Default(patched)
	origB, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal orig object: %w", err)
	}
	newB, err := json.Marshal(patched)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal new object: %w", err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(origB, newB, obj.DeepCopyObject())
	if err != nil {
		return nil, fmt.Errorf("failed to create two way merge patch: %w", err)
	}
	return patch, nil
}

// patchDefaults mirrors gitops-engine patchDefaultValues (and the two
// defaulting halves of applyPatch): data is decoded into typed (a new
// object of its kind; unknown JSON fields are dropped there, so typed only
// serves to compute the defaults), the defaults patch is applied to data
// itself, and the result re-encoded with sorted keys. A document that does
// not decode into its type is returned unchanged, as gitops-engine does.
func patchDefaults(data []byte, typed runtime.Object) ([]byte, error) {
	if err := json.Unmarshal(data, &typed); err != nil {
		return data, nil //nolint:nilerr // gitops-engine applyPatch skips defaulting when the JSON does not fit the type
	}
	patch, err := schemeDefaultPatch(typed)
	if err != nil {
		return nil, fmt.Errorf("error generating patch for default values: %w", err)
	}
	if string(patch) == "{}" {
		return data, nil
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
	if err != nil {
		return nil, err
	}
	// smpatch is strategicpatch with the same results in linear time.
	out, err := smpatch.StrategicMergePatch(data, patch, meta)
	if err != nil {
		return nil, fmt.Errorf("error applying patch for default values: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("error unmarshaling patched bytes: %w", err)
	}
	if m == nil {
		return nil, errors.New("defaulted object is not a JSON object")
	}
	return json.Marshal(m)
}
