// Package kube computes what the Kubernetes API server does to an object
// it stores, for both engines' verdicts: a field the server derives or
// defaults from another field follows that field after an engine's apply,
// so its verdict is read off the object the apply leaves, defaulted as the
// server defaults it (class R15 of docs/verdicts.md: make differential
// ENGINE=flux seed 42657, ENGINE=argocd seed 52103); and which writes its
// update validation rejects (UpdateRejections: a sync that fails changes
// nothing, class A38, ENGINE=argocd seed 64984).
package kube

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// Each install package registers its group's defaulting functions
	// (SetObjectDefaults_*, for the k8s.io/api types) in legacyscheme.
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// Stored is obj (a built-in kind) as the API server stores it after a
// write: decoded into its Go type, defaulted by the kind's defaulting
// functions and encoded again. The API server's decoding runs those
// functions on every create, update and patch (kubernetes
// pkg/apis/*/v1/defaults.go, e.g. core/v1 SetDefaults_Service: a Service
// whose sessionAffinity is ClientIP gets
// sessionAffinityConfig.clientIP.timeoutSeconds 10800, one whose
// sessionAffinity is None loses its sessionAffinityConfig). ok is false
// for a kind the scheme does not know (a custom resource) or an object
// that does not decode into its type: then nothing can be said. The
// feature gates some defaults depend on are those of the process (the Argo
// CD engine sets them to the release Argo CD links); the defaults read
// here (derived fields) depend on none.
func Stored(obj *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	if obj == nil {
		return nil, false
	}
	typed, err := scheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		return nil, false
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return nil, false
	}
	legacyscheme.Scheme.Default(typed)
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, false
	}
	return &unstructured.Unstructured{Object: out}, true
}

// Applied is the object a write leaves before the API server's defaulting:
// live with the fields at removed taken out (an apply drops the fields
// its manager no longer sets and no other manager owns) and the values of
// sets written over it (the applied manifest: maps merged key by key, any
// other value, a list included, replaced whole). A removed pointer names a
// map member (jsonpointer.Remove; callers hand over no list item). live is
// not changed.
func Applied(live *unstructured.Unstructured, removed []string, sets map[string]any) *unstructured.Unstructured {
	out := live.DeepCopy()
	for _, p := range removed {
		jsonpointer.Remove(out.Object, p)
	}
	if sets != nil {
		overlay(out.Object, runtime.DeepCopyJSON(sets))
	}
	return out
}

// overlay writes src over dst: maps key by key, other values whole.
func overlay(dst, src map[string]any) {
	for k, v := range src {
		sm, srcMap := v.(map[string]any)
		dm, dstMap := dst[k].(map[string]any)
		if srcMap && dstMap {
			overlay(dm, sm)
			continue
		}
		dst[k] = v
	}
}
