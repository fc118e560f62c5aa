//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// helmTool is the helm v4 CLI of this test binary.
var helmTool toolOnce

// helmCLI builds (once, cached in the user cache dir by
// hack/build-tools.sh helm, at go.mod's helm.sh/helm/v4 version) and returns
// the helm binary.
func helmCLI(t *testing.T) string {
	t.Helper()
	return helmTool.get(t, "helm", nil)
}

// helmTemplateChart prints what its templates see of values and
// .Capabilities, besides a Deployment and a Service.
var helmTemplateChart = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
	"values.yaml": "replicas: 1\ngreeting: from the chart\nregion: nowhere\nport: 80\n",
	"templates/caps.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-caps
data:
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
  minor: {{ .Capabilities.KubeVersion.Minor | quote }}
  deployments: {{ .Capabilities.APIVersions.Has "apps/v1/Deployment" | quote }}
  kustomizations: {{ .Capabilities.APIVersions.Has "kustomize.toolkit.fluxcd.io/v1" | quote }}
  release: {{ printf "%s/%s" .Release.Namespace .Release.Name | quote }}
`,
	"templates/deploy.yaml": renderLabChart["templates/deploy.yaml"],
	// renderLabChart's Service with the port a value.
	"templates/svc.yaml": strings.Replace(renderLabChart["templates/svc.yaml"], "port: 80,", "port: {{ .Values.port }},", 1),
}

// helmControllerMarks are what our render adds that `helm template` does
// not print, the reviewed difference: helm-controller's origin labels
// (internal/postrender/origin_labels.go) and the release marks Helm's
// install sets on what it applies (pkg/action/validate.go
// setMetadataVisitor), which a HelmRelease's objects carry and `helm
// template`'s manifest does not.
var helmControllerMarks = struct{ labels, annotations []string }{
	labels:      []string{"helm.toolkit.fluxcd.io/name", "helm.toolkit.fluxcd.io/namespace", "app.kubernetes.io/managed-by"},
	annotations: []string{"meta.helm.sh/release-name", "meta.helm.sh/release-namespace"},
}

// TestRenderHelmTemplateGroundTruth holds our HelmRelease render against
// the real `helm template` (the CLI of the same helm.sh/helm/v4 version),
// on the same chart and values: the HelmRelease's values composed from the
// chart's values.yaml, a valuesFrom ConfigMap (whole, and one key at a
// targetPath) and inline values are given to helm template as the values
// file and --set-string they amount to. Offline both use Helm's default
// .Capabilities; against the cluster (render --from-cluster, helm
// template --dry-run=server) both read it from discovery. Equal after
// sorting, once helmControllerMarks are removed from ours.
func TestRenderHelmTemplateGroundTruth(t *testing.T) {
	helm := helmCLI(t)
	ns := E.Namespace(t, "render")
	dir := t.TempDir()
	for n, c := range helmTemplateChart {
		fluxWrite(t, dir, "charts/web/"+n, c)
	}
	fluxWrite(t, dir, "clusters/web.yaml", fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: repo, namespace: %[1]s}
spec: {interval: 1h, url: "https://example.invalid/repo.git", ref: {branch: main}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: %[1]s}
spec:
  interval: 1h
  releaseName: web-release
  chart:
    spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: repo}}
  values: {replicas: 2}
  valuesFrom:
    - {kind: ConfigMap, name: web-values}
    - {kind: ConfigMap, name: web-values, valuesKey: region, targetPath: region}
`, ns))
	const fromValues = "greeting: from valuesFrom\nport: 8081\n"
	// Offline the ConfigMap is the checkout's; with --from-cluster, the
	// cluster's (as helm-controller reads it).
	fluxWrite(t, dir, "clusters/values.yaml", fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: web-values, namespace: %s}
data:
  values.yaml: |
%s  region: eu-west-1
`, ns, indent(fromValues, "    ")))
	E.Kubectl(t, "-n", ns, "create", "configmap", "web-values", "--from-literal=values.yaml="+fromValues, "--from-literal=region=eu-west-1")

	// What the HelmRelease's values amount to for helm template: the
	// ConfigMap's values.yaml, then its region key at targetPath, then the
	// inline values (no key overlaps, so helm's own order, files before
	// --set, gives the same result).
	vals := fluxWrite(t, t.TempDir(), "values.yaml", fromValues)
	inline := fluxWrite(t, t.TempDir(), "inline.yaml", "replicas: 2\n")
	chart := filepath.Join(dir, "charts", "web")
	helmArgs := []string{"template", "web-release", chart, "-n", ns, "-f", vals, "-f", inline, "--set-string", "region=eu-west-1"}

	for _, c := range []struct {
		name       string
		renderArgs []string
		helmArgs   []string
		check      func(caps map[string]any)
	}{
		{"offline", nil, nil, func(caps map[string]any) {
			if caps["kustomizations"] != "false" {
				t.Errorf("offline: Helm's default API versions hold Flux's: %v", caps)
			}
		}},
		{"cluster", []string{"--from-cluster"}, []string{"--dry-run=server"}, func(caps map[string]any) {
			// The shared cluster serves Flux's CRDs and is v1.37.
			if caps["kustomizations"] != "true" || !strings.HasPrefix(fmt.Sprint(caps["kubeVersion"]), "v1.37.") {
				t.Errorf("cluster: not the cluster's capabilities: %v", caps)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := E.Drift(t, append([]string{"render", "--source", dir, "--helmrelease", ns + "/web", "-o", "json"}, c.renderArgs...)...)
			if res.Code != 0 {
				t.Fatalf("render: exit %d: %s", res.Code, res.Stderr)
			}
			var list struct {
				Items []map[string]any `json:"items"`
			}
			DecodeJSON(t, res.Stdout, &list)
			for _, o := range list.Items {
				u := unstructured.Unstructured{Object: o}
				for _, k := range helmControllerMarks.labels {
					unstructured.RemoveNestedField(o, "metadata", "labels", k)
				}
				for _, k := range helmControllerMarks.annotations {
					unstructured.RemoveNestedField(o, "metadata", "annotations", k)
				}
				for _, f := range []string{"labels", "annotations"} {
					if m, ok, _ := unstructured.NestedMap(o, "metadata", f); ok && len(m) == 0 {
						unstructured.RemoveNestedField(o, "metadata", f)
					}
				}
				if u.GetKind() == "ConfigMap" {
					data, _, _ := unstructured.NestedMap(o, "data")
					c.check(data)
				}
			}
			ht := E.Run(t, RunOpts{}, helm, append(helmArgs, c.helmArgs...)...)
			if ht.Code != 0 {
				t.Fatalf("helm template: exit %d: %s", ht.Code, ht.Stderr)
			}
			theirs := yamlDocs(t, "helm template", ht.Stdout)
			ours, want := sortedYAML(t, list.Items), sortedYAML(t, theirs)
			if ours != want {
				t.Errorf("render differs from helm template:\n--- ours\n%s\n--- helm template\n%s", ours, want)
			}
			if len(theirs) != 3 {
				t.Errorf("helm template printed %d objects, want 3", len(theirs))
			}
		})
	}
}
