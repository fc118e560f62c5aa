package adopt

import (
	"os"
	"path/filepath"
	"testing"
)

// A values key set in a layer (a HelmRelease's inline values) is written
// there; one the layer lacks goes to the chart's values file.
func TestLayeredHelmLocator(t *testing.T) {
	hr := filepath.Join(t.TempDir(), "hr.yaml")
	body := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: shop}\nspec:\n  values:\n    replicaCount: 3\n"
	if err := os.WriteFile(hr, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	l := LayeredHelmLocator{
		Helm:   HelmLocator{Chart: filepath.Join("testdata", "chart")},
		Layers: []ValuesLayer{{File: hr, Prefix: "/spec/values", Object: &Object{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease", Namespace: "shop", Name: "web"}}},
	}
	obj := Object{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	tg, err := l.Locate(obj, "/spec/replicas", nil)
	if err != nil || tg.File != hr || tg.Doc != 1 || tg.Pointer != "/spec/values/replicaCount" {
		t.Errorf("replicas: %+v %v", tg, err)
	}
	tg, err = l.Locate(obj, "/spec/template/spec/containers/0/resources/limits/cpu", nil)
	if err != nil || tg.File != filepath.Join("testdata", "chart", "values.yaml") || tg.Pointer != "/resources/limits/cpu" {
		t.Errorf("cpu: %+v %v", tg, err)
	}
	// A computed field stays a skip, whatever the layers hold.
	if _, err := l.Locate(obj, "/spec/template/spec/containers/0/image", nil); err == nil {
		t.Error("image: want the template's refusal")
	}
}
