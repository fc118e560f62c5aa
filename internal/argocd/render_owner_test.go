package argocd

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRenderOwner(t *testing.T) {
	obj := func(kind, ns, name string, ann, labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": ns, "annotations": ann, "labels": labels}}}
	}
	for _, tc := range []struct {
		live     *unstructured.Unstructured
		ns, name string
		ok       bool
	}{
		{obj("Deployment", "shop", "web", map[string]any{AnnotationTrackingID: "web:apps/Deployment:shop/web"}, nil), "argocd", "web", true},
		{obj("Deployment", "shop", "web", map[string]any{AnnotationTrackingID: "team-a_web:apps/Deployment:shop/web"}, nil), "team-a", "web", true},
		// Copied from another object: Argo CD does not own it.
		{obj("Deployment", "shop", "api", map[string]any{AnnotationTrackingID: "web:apps/Deployment:shop/web"}, nil), "", "", false},
		// A chart's own instance label is no Argo CD mark.
		{obj("Deployment", "shop", "web", nil, map[string]any{DefaultInstanceLabelKey: "web"}), "", "", false},
	} {
		ns, name, ok := renderOwner(DefaultNamespace)(tc.live)
		if ns != tc.ns || name != tc.name || ok != tc.ok {
			t.Errorf("%v: got %s/%s %v, want %s/%s %v", tc.live.GetAnnotations(), ns, name, ok, tc.ns, tc.name, tc.ok)
		}
	}
	got := renderTracking(map[string]string{"application.resourceTrackingMethod": "annotation+label", "application.instanceLabelKey": "example.com/app", "installationID": "east"})
	if got.Method != TrackingAnnotationAndLabel || got.LabelKey != "example.com/app" || got.InstallationID != "east" {
		t.Errorf("tracking %+v", got)
	}
	if got := renderTracking(nil); got.Method != TrackingAnnotation || got.LabelKey != DefaultInstanceLabelKey {
		t.Errorf("default tracking %+v", got)
	}
}
