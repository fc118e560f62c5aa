package flux

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/redact"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// A manifest given with -f is Git as written; kustomize-controller applies
// it after its Kustomization's build. Measured on the real controller (make
// differential seeds 1048, 5101): its patch's annotation and its postBuild
// substitution are not drift, the ownership labels and commonMetadata are
// the controller's own, and targetNamespace puts it where the live object is.
func TestBuildDesiredIsWhatKustomizeControllerApplies(t *testing.T) {
	ks := obj(t, `
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps
  prune: true
  targetNamespace: prod
  sourceRef: {kind: GitRepository, name: repo}
  commonMetadata: {labels: {team: web}}
  patches:
  - patch: |
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: any, annotations: {patched-by: flux}}
    target: {kind: ConfigMap}
  postBuild:
    substitute: {TIER: gold}
    substituteFrom:
    - {kind: Secret, name: vars}
`)
	vars := obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: vars, namespace: flux-system}, data: {REGION: ZXUtd2VzdA==}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks, vars}})
	live := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: prod, labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}}}`)
	desired := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: dev, labels: {tier: "${TIER}"}}, data: {region: "${REGION}"}}`)
	secrets := redact.NewScrubber()
	built, notes := a.BuildDesired(context.Background(), live, desired, secrets)
	if built == nil {
		t.Fatalf("not built: %+v", notes)
	}
	want := map[string]string{
		"metadata.namespace":                                     "prod",
		"metadata.annotations.patched-by":                        "flux",
		"metadata.labels.tier":                                   "gold",
		"metadata.labels.team":                                   "web",
		"metadata.labels.kustomize\\.toolkit\\.fluxcd\\.io/name": "apps",
		"data.region":                                            "eu-west",
	}
	got := map[string]string{
		"metadata.namespace":                                     built.GetNamespace(),
		"metadata.annotations.patched-by":                        built.GetAnnotations()["patched-by"],
		"metadata.labels.tier":                                   built.GetLabels()["tier"],
		"metadata.labels.team":                                   built.GetLabels()["team"],
		"metadata.labels.kustomize\\.toolkit\\.fluxcd\\.io/name": built.GetLabels()[KustomizeNameLabel],
	}
	got["data.region"], _, _ = unstructured.NestedString(built.Object, "data", "region")
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	// The Secret's value came through the build: printing must mask it.
	if s := secrets.String("region eu-west"); s == "region eu-west" {
		t.Errorf("the substituted Secret value is not known to the scrubber: %q", s)
	}

	// Not a Flux object, or a Kustomization with components: nil, and a
	// note saying the file was compared as written.
	if b, _ := a.BuildDesired(context.Background(), obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`), desired, secrets); b != nil {
		t.Error("built an object Flux does not own")
	}
	_ = unstructured.SetNestedStringSlice(ks.Object, []string{"../components/x"}, "spec", "components")
	a = newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks, vars}})
	if b, notes := a.BuildDesired(context.Background(), live, desired, secrets); b != nil || len(notes) != 1 || notes[0].Reason != "build-skipped" {
		t.Errorf("components: built %v, notes %+v", b != nil, notes)
	}
}
