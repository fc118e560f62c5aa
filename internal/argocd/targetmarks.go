package argocd

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// argoMarksTarget says whether Argo CD's target for live carries the
// tracking marks (annotation, instance label) at all. The repo-server sets
// them on every manifest but a CustomResourceDefinition
// (reposerver/repository/repository.go GenerateManifests: `!kube.IsCRD(target)`;
// util/argo/resource_tracking.go Normalize: "CRDs don't get tracking
// annotations"), and the controller adds them afterwards only to a
// cluster-scoped manifest that names a namespace, clearing it
// (controller/state.go normalizeClusterScopeTracking). So a CRD synced from
// a manifest without a namespace never carries them, Argo CD's diff never
// shows them missing, and a sync never writes them (seen on Argo CD
// v3.2.11: differential seeds 20002, 20028, 20033, 20083). given is the
// desired manifest (Git or Argo CD's last sync), nil in inferred mode
// without one: then the usual manifest without a namespace is assumed.
func argoMarksTarget(live, given *unstructured.Unstructured) bool {
	obj := given
	if obj == nil {
		obj = live
	}
	if obj == nil || !isCRD(obj) {
		return true
	}
	return given != nil && given.GetNamespace() != ""
}

// isCRD mirrors gitops-engine pkg/utils/kube IsCRD.
func isCRD(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}
