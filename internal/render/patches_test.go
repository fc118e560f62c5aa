package render

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestNewEnvSkipsPatchFragments: a file a kustomization patches with
// (fluxcd/flux2-hub-spoke-example's clusters/*/apps/podinfo-values.yaml: a
// HelmRelease with a name and no chart source) and a document holding a
// $patch directive are patches, not objects: render must not take them
// for HelmReleases to render ("chart source kind \"\" is not supported")
// nor answer a lookup with them. The whole HelmRelease of the base stays.
func TestNewEnvSkipsPatchFragments(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"deploy/apps/kustomization.yaml": "resources: [podinfo.yaml]\n",
		"deploy/apps/podinfo.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: podinfo}
spec:
  chart: {spec: {chart: podinfo, sourceRef: {kind: HelmRepository, name: podinfo}}}
`,
		"clusters/staging/apps/kustomization.yaml": `resources: [../../../deploy/apps]
patches:
  - path: podinfo-values.yaml
    target: {kind: HelmRelease, name: podinfo}
patchesStrategicMerge:
  - delete-cm.yaml
`,
		"clusters/staging/apps/podinfo-values.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo}
spec: {values: {replicaCount: 2}}
`,
		"clusters/staging/apps/delete-cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone}\n",
		"other/directive.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone2}\n$patch: delete\n",
	}
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env, err := NewEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range env.Files {
		got = append(got, f.GetKind()+" "+f.GetNamespace()+"/"+f.GetName())
	}
	if len(got) != 1 || got[0] != "HelmRelease podinfo/podinfo" {
		t.Errorf("objects of the checkout = %q, want only the base HelmRelease podinfo/podinfo (patch files and $patch documents are no objects)", got)
	}
	hr := schema.GroupVersionKind{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease"}
	if obj, err := env.Lookup(context.Background(), hr, "flux-system", "podinfo"); err == nil {
		t.Errorf("Lookup of flux-system/podinfo found %s from a patch file", obj.GetName())
	}
}
