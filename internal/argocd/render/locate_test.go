package render

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

// TestLocate: on a checkout with a directory, a kustomize and a Helm
// source, Locate finds what Render reads (the directory's manifest files
// without recurse, the skip marker or excluded names; the kustomize
// directory; the chart with valuesObject over the value files, last
// first), through .argocd-source overrides and a multi-source $ref; what
// the checkout does not decide is refused with the reason.
func TestLocate(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {a: b}\n"
	env := checkout(t, map[string]string{
		"apps/plain/web.yaml":            strings.Replace(cm, "%s", "web", 1),
		"apps/plain/more.yml":            strings.Replace(cm, "%s", "more", 1),
		"apps/plain/obj.json":            `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"json"}}`,
		"apps/plain/skipped.yaml":        "# +argocd:skip-file-rendering\n" + strings.Replace(cm, "%s", "skipped", 1),
		"apps/plain/old.yaml":            strings.Replace(cm, "%s", "old", 1),
		"apps/plain/README.md":           "not a manifest\n",
		"apps/plain/sub/deep.yaml":       strings.Replace(cm, "%s", "deep", 1),
		"apps/plain/.argocd-source.yaml": "directory:\n  exclude: 'old.yaml'\n",
		"apps/kust/kustomization.yaml":   "resources: [cm.yaml]\n",
		"apps/kust/cm.yaml":              strings.Replace(cm, "%s", "kust", 1),
		"charts/web/Chart.yaml":          "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/values.yaml":         "replicas: 1\n",
		"charts/web/values-prod.yaml":    "replicas: 3\n",
		"charts/web/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {replicas: {{ .Values.replicas | quote }}}\n",
		"envs/prod.yaml":                 "replicas: 4\n",
		"argocd/apps.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: helm-object, namespace: argocd}
spec:
  source:
    repoURL: https://git.example/repo.git
    path: charts/web
    helm:
      valueFiles: [values.yaml, values-prod.yaml, missing.yaml]
      ignoreMissingValueFiles: true
      valuesObject: {replicas: 5}
  destination: {server: https://kubernetes.default.svc, namespace: shop}
`,
	})
	rel := func(ps ...string) string {
		var out []string
		for _, p := range ps {
			r, _ := filepath.Rel(env.Root, p)
			out = append(out, filepath.ToSlash(r))
		}
		return strings.Join(out, ",")
	}
	locate := func(y string) (*render.Location, error) {
		t.Helper()
		return New(Options{Tracking: tracking}).Locate(context.Background(), env, app(t, "metadata: {name: shop, namespace: argocd}\nspec:\n"+y+"  destination: {server: https://kubernetes.default.svc, namespace: shop}\n"))
	}
	src := func(path, extra string) string {
		return "  source:\n    repoURL: https://git.example/repo.git\n    path: " + path + "\n" + extra
	}

	loc, err := locate(src("apps/plain", ""))
	if err != nil || loc.Kind != render.LocateFiles || rel(loc.Dir) != "apps/plain" || rel(loc.Files...) != "apps/plain/more.yml,apps/plain/obj.json,apps/plain/web.yaml" {
		t.Errorf("directory: %+v %v", loc, err)
	}
	if loc, err = locate(src("apps/plain", "    directory: {recurse: true, include: '*.yaml'}\n")); err != nil || rel(loc.Files...) != "apps/plain/sub/deep.yaml,apps/plain/web.yaml" {
		t.Errorf("directory, recurse and include: %+v %v", loc, err)
	}
	if loc, err = locate(src("apps/kust", "")); err != nil || loc.Kind != render.LocateKustomize || rel(loc.Dir) != "apps/kust" {
		t.Errorf("kustomize: %+v %v", loc, err)
	}

	// The Application read from the checkout: valuesObject is edited in
	// its manifest there, then values-prod.yaml, then values.yaml.
	var helmApp = env.Files[0]
	for _, f := range env.Files {
		if f.GetName() == "helm-object" {
			helmApp = f
		}
	}
	loc, err = New(Options{Tracking: tracking}).Locate(context.Background(), env, helmApp)
	if err != nil || loc.Kind != render.LocateHelm || rel(loc.Dir) != "charts/web" || len(loc.Values) != 3 {
		t.Fatalf("helm: %+v %v", loc, err)
	}
	if v := loc.Values[0]; rel(v.File) != "argocd/apps.yaml" || v.Prefix != "/spec/source/helm/valuesObject" || v.Object == nil || v.Object.GetName() != "helm-object" {
		t.Errorf("helm: first layer %+v, want the Application's valuesObject", v)
	}
	if got := rel(loc.Values[1].File, loc.Values[2].File); got != "charts/web/values-prod.yaml,charts/web/values.yaml" || loc.Values[1].Prefix != "" {
		t.Errorf("helm: value files %s, want the last first", got)
	}
	// Multi-source: a ref source and the chart; $ref value files.
	loc, err = locate(`  sources:
  - {repoURL: https://git.example/repo.git, ref: values}
  - repoURL: https://git.example/repo.git
    path: charts/web
    helm: {valueFiles: [$values/envs/prod.yaml]}
`)
	if err != nil || loc.Kind != render.LocateHelm || len(loc.Values) != 1 || rel(loc.Values[0].File) != "envs/prod.yaml" {
		t.Errorf("multi-source $ref: %+v %v", loc, err)
	}

	for _, c := range []struct{ name, spec, want string }{
		{"two sources", "  sources:\n  - {repoURL: https://git.example/repo.git, path: apps/plain}\n  - {repoURL: https://git.example/repo.git, path: apps/kust}\n", "2 sources give manifests (spec.sources[0], spec.sources[1])"},
		{"repository chart", "  source: {repoURL: https://charts.example, chart: web, targetRevision: 1.0.0}\n", `chart "web" comes from the Helm repository`},
		{"kustomize images", src("apps/kust", "    kustomize: {images: [nginx:1.29], namePrefix: p-}\n"), "spec.source.kustomize sets images, namePrefix"},
		{"helm parameters", src("charts/web", "    helm: {parameters: [{name: replicas, value: '2'}]}\n"), "spec.source.helm.parameters"},
		{"helm values string", src("charts/web", "    helm: {values: 'replicas: 2'}\n"), "spec.source.helm.values is a YAML string"},
		{"valuesObject not in the checkout", src("charts/web", "    helm: {valuesObject: {replicas: 2}}\n"), "valuesObject is not in a file of the checkout"},
		{"missing value file", src("charts/web", "    helm: {valueFiles: [nope.yaml]}\n"), "nope.yaml does not exist"},
		{"path outside", src("../..", ""), "leaves the source directory"},
	} {
		if _, err := locate(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
