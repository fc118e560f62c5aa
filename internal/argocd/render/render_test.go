package render

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/bound"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// checkout writes files (path -> content) into a temporary directory and
// returns the render environment over it.
func checkout(t testing.TB, files map[string]string) *render.Env {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env, err := render.NewEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func app(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\n"+y), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func tracking(data map[string]string) Tracking {
	t := Tracking{Method: "annotation", LabelKey: "app.kubernetes.io/instance", InstallationID: data["installationID"]}
	if v := data["application.resourceTrackingMethod"]; v != "" {
		t.Method = v
	}
	if v := data["application.instanceLabelKey"]; v != "" {
		t.LabelKey = v
	}
	return t
}

func renderApp(t testing.TB, env *render.Env, y string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	r := New(Options{Tracking: tracking})
	objs, err := r.Render(context.Background(), env, app(t, y))
	render.Sort(objs)
	return objs, err
}

func names(objs []*unstructured.Unstructured) string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("%s/%s not rendered; have %s", kind, name, names(objs))
	return nil
}

const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"

func cmNamed(n string) string { return strings.Replace(cm, "%s", n, 1) }

func TestDirectory(t *testing.T) {
	env := checkout(t, map[string]string{
		"app/a.yaml":             cmNamed("a"),
		"app/b.yml":              cmNamed("b") + "---\n" + cmNamed("b2"),
		"app/c.json":             `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`,
		"app/values.yaml":        "replicas: 3\n",
		"app/marked.yaml":        "# +argocd:skip-file-rendering\n" + cmNamed("marked"),
		"app/readme.txt":         cmNamed("txt"),
		"app/sub/d.yaml":         cmNamed("d"),
		"app/sub/skip.yaml":      cmNamed("skipped"),
		"app/sub/deeper/e.yaml":  cmNamed("e"),
		"app/role.yaml":          "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\n",
		"app/ns-given.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f, namespace: other}\n",
		"app/list.yaml":          "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(cmNamed("listed")), "\n", "\n  ") + "\n",
		"app/null-list.yaml":     "apiVersion: v1\nkind: ConfigMapList\nitems: null\n",
		"app/other-dir-app.yaml": cmNamed("g"),
	})
	base := `metadata: {name: web, namespace: argocd}
spec:
  destination: {namespace: shop}
  source:
    repoURL: https://example.com/repo.git
    path: app
`
	objs, err := renderApp(t, env, base)
	if err != nil {
		t.Fatal(err)
	}
	// Not recursive: subdirectories are left out; the values file, the
	// marked file and the .txt file are no manifests.
	want := "ClusterRole//reader,ConfigMap/other/f,ConfigMap/shop/a,ConfigMap/shop/b,ConfigMap/shop/b2,ConfigMap/shop/c,ConfigMap/shop/g,ConfigMap/shop/listed"
	if got := names(objs); got != want {
		t.Errorf("rendered %s\nwant     %s", got, want)
	}
	role := find(t, objs, "ClusterRole", "reader")
	if got := role.GetAnnotations()[annotationTrackingID]; got != "web:rbac.authorization.k8s.io/ClusterRole:shop/reader" {
		t.Errorf("cluster-scoped tracking id %q: Argo names the destination namespace", got)
	}
	if got := find(t, objs, "ConfigMap", "f").GetAnnotations()[annotationTrackingID]; got != "web:/ConfigMap:other/f" {
		t.Errorf("tracking id %q", got)
	}

	objs, err = renderApp(t, env, base+"    directory: {recurse: true, exclude: 'sub/skip.yaml', include: '{*.yaml,sub/*}'}\n")
	if err != nil {
		t.Fatal(err)
	}
	// include: top-level .yaml and anything under sub (gobwas globs match
	// "/" with *: sub/deeper/e.yaml is in).
	want = "ClusterRole//reader,ConfigMap/other/f,ConfigMap/shop/a,ConfigMap/shop/d,ConfigMap/shop/e,ConfigMap/shop/g,ConfigMap/shop/listed"
	if got := names(objs); got != want {
		t.Errorf("recurse/include/exclude rendered %s\nwant %s", got, want)
	}
}

func TestDirectoryErrors(t *testing.T) {
	env := checkout(t, map[string]string{
		"app/a.yaml":      cmNamed("a"),
		"app/x.jsonnet":   "{}",
		"bad/broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n",
		"secret/s.yaml":   cmNamed("s"),
	})
	src := func(path string) string {
		return "metadata: {name: web, namespace: argocd}\nspec:\n  destination: {namespace: shop}\n  source: {repoURL: r, path: " + path + "}\n"
	}
	if _, err := renderApp(t, env, src("app")); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "x.jsonnet") {
		t.Errorf("jsonnet: %v", err)
	}
	if _, err := renderApp(t, env, src("bad")); err == nil || !strings.Contains(err.Error(), "broken.yaml") {
		t.Errorf("broken manifest: %v", err)
	}
	if _, err := renderApp(t, env, src("../outside")); err == nil || !strings.Contains(err.Error(), "leaves the source directory") {
		t.Errorf("path with ..: %v", err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "o.yaml"), []byte(cmNamed("outside")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(env.Root, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := renderApp(t, env, src("link")); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("path through a symlink out of the checkout: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "o.yaml"), filepath.Join(env.Root, "secret", "o.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := renderApp(t, env, src("secret")); err == nil || !strings.Contains(err.Error(), "illegal filepath in symlink") {
		t.Errorf("file symlink out of the checkout: %v", err)
	}
	plugin := "metadata: {name: web, namespace: argocd}\nspec:\n  destination: {namespace: shop}\n  source: {repoURL: r, path: app, plugin: {name: cdk8s}}\n"
	if _, err := renderApp(t, env, plugin); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "cdk8s") {
		t.Errorf("plugin: %v", err)
	}
	two := "metadata: {name: web, namespace: argocd}\nspec:\n  source: {repoURL: r, path: app, helm: {}, directory: {}}\n"
	if _, err := renderApp(t, env, two); err == nil || !strings.Contains(err.Error(), "multiple application sources defined: Helm,Directory") {
		t.Errorf("two types: %v", err)
	}
}

const deploy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: app, image: "nginx:1.27"}, {name: side, image: "busybox"}]}
`

func TestKustomize(t *testing.T) {
	env := checkout(t, map[string]string{
		"k/kustomization.yaml":      "resources: [deploy.yaml]\ncommonLabels: {team: old}\nimages: [{name: busybox, newTag: '1.36'}]\n",
		"k/deploy.yaml":             deploy,
		"k/comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations: {from: component}\n",
	})
	spec := `metadata: {name: api, namespace: argocd}
spec:
  destination: {namespace: shop}
  source:
    repoURL: r
    path: k
    kustomize:
      namePrefix: p-
      nameSuffix: -s
      images: ["nginx=ghcr.io/x/nginx:1.27.3", "busybox:*"]
      replicas: [{name: api, count: "4"}]
      commonLabels: {env: "${ARGOCD_APP_NAME}"}
      commonAnnotations: {note: "${ARGOCD_APP_NAME}"}
      namespace: kns
      components: [comp, absent]
      ignoreMissingComponents: true
      patches:
        - target: {kind: Deployment}
          patch: |
            - {op: add, path: /spec/minReadySeconds, value: 7}
`
	objs, err := renderApp(t, env, spec)
	if err != nil {
		t.Fatal(err)
	}
	d := find(t, objs, "Deployment", "p-api-s")
	if d.GetNamespace() != "kns" {
		t.Errorf("namespace %q", d.GetNamespace())
	}
	l := d.GetLabels()
	if l["env"] != "api" || l["team"] != "old" {
		t.Errorf("labels %v: commonLabels substituted, the file's kept", l)
	}
	if v, _, _ := unstructured.NestedInt64(d.Object, "spec", "minReadySeconds"); v != 7 {
		t.Errorf("the Application's patch was not applied: minReadySeconds %d", v)
	}
	a := d.GetAnnotations()
	if a["note"] != "${ARGOCD_APP_NAME}" || a["from"] != "component" {
		t.Errorf("annotations %v: not substituted without commonAnnotationsEnvsubst; the component's added", a)
	}
	if a[annotationTrackingID] != "api:apps/Deployment:kns/p-api-s" {
		t.Errorf("tracking id %q", a[annotationTrackingID])
	}
	if r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); r != 4 {
		t.Errorf("replicas %d", r)
	}
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	var images []string
	for _, c := range cs {
		images = append(images, c.(map[string]any)["image"].(string))
	}
	// busybox:* keeps the file's tag.
	if got := strings.Join(images, ","); got != "ghcr.io/x/nginx:1.27.3,busybox:1.36" {
		t.Errorf("images %s", got)
	}
	// The edit is made on a copy: the checkout is unchanged.
	b, _ := os.ReadFile(filepath.Join(env.Root, "k", "kustomization.yaml"))
	if strings.Contains(string(b), "p-") {
		t.Errorf("the checkout's kustomization.yaml was edited:\n%s", b)
	}

	// kustomize edit add label refuses a key the file has, without force.
	clash := strings.Replace(spec, `commonLabels: {env: "${ARGOCD_APP_NAME}"}`, "commonLabels: {team: new}", 1)
	if _, err := renderApp(t, env, clash); err == nil || !strings.Contains(err.Error(), "label team already in kustomization file") {
		t.Errorf("label clash: %v", err)
	}
	forced := strings.Replace(clash, "commonLabels: {team: new}", "commonLabels: {team: new}\n      forceCommonLabels: true", 1)
	objs, err = renderApp(t, env, forced)
	if err != nil {
		t.Fatal(err)
	}
	if got := find(t, objs, "Deployment", "p-api-s").GetLabels()["team"]; got != "new" {
		t.Errorf("forced label %q", got)
	}
	missing := strings.Replace(spec, "ignoreMissingComponents: true", "ignoreMissingComponents: false", 1)
	if _, err := renderApp(t, env, missing); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("missing component: %v", err)
	}
}

func TestKustomizeNoEscape(t *testing.T) {
	env := checkout(t, map[string]string{
		"k/kustomization.yaml": "resources: [../../etc]\n",
	})
	_, err := renderApp(t, env, "metadata: {name: x, namespace: argocd}\nspec:\n  source: {repoURL: r, path: k}\n")
	if err == nil || !strings.Contains(err.Error(), "kustomize build k") {
		t.Errorf("a base outside the checkout: %v", err)
	}
}

var chart = map[string]string{
	"charts/web/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
	"charts/web/values.yaml": "replicas: 1\ngreeting: chart\nlist: [a]\n",
	"charts/web/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-cfg}
data:
  ns: {{ .Release.Namespace | quote }}
  greeting: {{ .Values.greeting | quote }}
  replicas: {{ .Values.replicas | quote }}
  csv: {{ .Values.csv | default "" | quote }}
  file: {{ .Values.file | default "" | quote }}
  obj: {{ .Values.obj | default "" | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
`,
	"charts/web/templates/test.yaml": `apiVersion: v1
kind: Pod
metadata: {name: {{ .Release.Name }}-test, annotations: {helm.sh/hook: test}}
spec: {containers: [{name: t, image: busybox}]}
`,
	"charts/web/crds/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`,
	"charts/web/templates/widget.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
	"values/prod.yaml":                 "greeting: from the values repo\n",
	"charts/web/file.txt":              "file content",
}

func TestHelm(t *testing.T) {
	env := checkout(t, chart)
	valuesRepo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(valuesRepo, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(valuesRepo, "env", "prod.yaml"), []byte("greeting: from the ref source\nreplicas: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env.SourceMap = map[string]string{"https://example.com/values.git": valuesRepo}
	spec := `metadata: {name: web-app, namespace: argocd}
spec:
  destination: {namespace: shop}
  sources:
    - repoURL: https://example.com/charts.git
      path: charts/web
      helm:
        valueFiles: [$values/env/prod.yaml, missing.yaml]
        ignoreMissingValueFiles: true
        values: "obj: from values"
        valuesObject: {obj: from valuesObject}
        parameters: [{name: csv, value: "a,b"}, {name: replicas, value: "3"}]
        fileParameters: [{name: file, path: file.txt}]
        kubeVersion: "1.30.0"
        skipTests: true
    - repoURL: https://example.com/values.git
      ref: values
`
	objs, err := renderApp(t, env, spec)
	if err != nil {
		t.Fatal(err)
	}
	// skipTests drops the test hook; the CRD is in (include-crds), has no
	// tracking id (GenerateManifests skips CRDs) and, like the Widget it
	// declares cluster-scoped, no namespace.
	if got, want := names(objs), "ConfigMap/shop/web-app-cfg,CustomResourceDefinition//widgets.example.com,Widget//w"; got != want {
		t.Errorf("rendered %s, want %s", got, want)
	}
	if _, ok := find(t, objs, "CustomResourceDefinition", "widgets.example.com").GetAnnotations()[annotationTrackingID]; ok {
		t.Error("a CRD got a tracking id")
	}
	data, _, _ := unstructured.NestedStringMap(find(t, objs, "ConfigMap", "web-app-cfg").Object, "data")
	want := map[string]string{"ns": "shop", "greeting": "from the ref source", "replicas": "3", "csv": "a,b",
		"file": "file content", "obj": "from valuesObject", "kube": "v1.30.0"}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("data.%s = %q, want %q", k, data[k], v)
		}
	}

	// releaseName, helm.namespace, skipCrds, and a missing values file
	// that is not ignored.
	other := `metadata: {name: web-app, namespace: argocd}
spec:
  destination: {namespace: shop}
  source:
    repoURL: https://example.com/charts.git
    path: charts/web
    helm: {releaseName: rel, namespace: helmns, skipCrds: true}
`
	objs, err = renderApp(t, env, other)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(objs), "ConfigMap/shop/rel-cfg,Pod/shop/rel-test,Widget/shop/w"; got != want {
		t.Errorf("rendered %s, want %s (no CRD in the render: Widget counts as namespaced)", got, want)
	}
	if got := find(t, objs, "ConfigMap", "rel-cfg").Object["data"].(map[string]any)["ns"]; got != "helmns" {
		t.Errorf("release namespace %v", got)
	}
	// No destination namespace: helm template's default namespace.
	objs, err = renderApp(t, env, strings.Replace(other, "  destination: {namespace: shop}\n", "", 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := find(t, objs, "ConfigMap", "rel-cfg").Object["data"].(map[string]any)["ns"]; got != "helmns" {
		t.Errorf("release namespace %v", got)
	}
	objs, err = renderApp(t, env, strings.Replace(strings.Replace(other, "  destination: {namespace: shop}\n", "", 1), "namespace: helmns, ", "", 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := find(t, objs, "ConfigMap", "rel-cfg").Object["data"].(map[string]any)["ns"]; got != "default" {
		t.Errorf("release namespace without any: %v, want helm's default", got)
	}
	missing := strings.Replace(other, "skipCrds: true", "valueFiles: [absent.yaml]", 1)
	if _, err := renderApp(t, env, missing); err == nil || !strings.Contains(err.Error(), "absent.yaml") {
		t.Errorf("missing values file: %v", err)
	}
	escape := strings.Replace(other, "skipCrds: true", "valueFiles: [../../../etc/passwd]", 1)
	if _, err := renderApp(t, env, escape); err == nil || !strings.Contains(err.Error(), "leaves the source directory") {
		t.Errorf("values file outside the checkout: %v", err)
	}
	notYAML := checkout(t, map[string]string{"charts/web/Chart.yaml": chart["charts/web/Chart.yaml"], "charts/web/bad.yaml": "a: [\n"})
	bad := strings.Replace(other, "skipCrds: true", "valueFiles: [bad.yaml]", 1)
	if _, err := renderApp(t, notYAML, bad); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("values file that is not YAML: %v", err)
	}
	remote := `metadata: {name: x, namespace: argocd}
spec:
  source: {repoURL: https://charts.example.com, chart: web, targetRevision: 1.0.0}
`
	if _, err := renderApp(t, env, remote); err == nil || !strings.Contains(err.Error(), "not available offline") {
		t.Errorf("chart from a Helm repository: %v", err)
	}
}

func TestTrackingMethods(t *testing.T) {
	files := map[string]string{"app/a.yaml": cmNamed("a")}
	spec := "metadata: {name: web, namespace: team-a}\nspec:\n  destination: {namespace: shop}\n  source: {repoURL: r, path: app}\n"
	for _, tc := range []struct {
		cm              string
		annotation, lbl string
	}{
		{"", "team-a_web:/ConfigMap:shop/a", ""},
		{"  application.resourceTrackingMethod: label\n", "", "team-a_web"},
		{"  application.resourceTrackingMethod: annotation+label\n  application.instanceLabelKey: example.com/app\n  installationID: east\n", "team-a_web:/ConfigMap:shop/a", "team-a_web"},
	} {
		f := map[string]string{"argocd-cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata:\n" + tc.cm}
		if tc.cm == "" {
			f = map[string]string{}
		}
		for k, v := range files {
			f[k] = v
		}
		objs, err := renderApp(t, checkout(t, f), spec)
		if err != nil {
			t.Fatal(err)
		}
		o := find(t, objs, "ConfigMap", "a")
		if got := o.GetAnnotations()[annotationTrackingID]; got != tc.annotation {
			t.Errorf("%q: tracking id %q, want %q", tc.cm, got, tc.annotation)
		}
		key := "app.kubernetes.io/instance"
		if strings.Contains(tc.cm, "example.com/app") {
			key = "example.com/app"
			if got := o.GetAnnotations()[annotationInstallationID]; got != "east" {
				t.Errorf("installation id %q", got)
			}
		}
		if got := o.GetLabels()[key]; got != tc.lbl {
			t.Errorf("%q: label %s=%q, want %q", tc.cm, key, got, tc.lbl)
		}
	}
}

func TestTypeDetectionAndOverrides(t *testing.T) {
	env := checkout(t, map[string]string{
		"both/Chart.yaml":              chart["charts/web/Chart.yaml"],
		"both/kustomization.yaml":      "resources: [cm.yaml]\n",
		"both/cm.yaml":                 cmNamed("from-kustomize"),
		"both/templates/cm.yaml":       cmNamed("from-helm"),
		"over/Chart.yaml":              chart["charts/web/Chart.yaml"],
		"over/templates/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}}\n",
		"over/.argocd-source.yaml":     "helm: {releaseName: from-file}\n",
		"over/.argocd-source-web.yaml": "helm: {releaseName: from-app-file}\n",
	})
	objs, err := renderApp(t, env, "metadata: {name: web, namespace: argocd}\nspec:\n  source: {repoURL: r, path: both}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(objs); got != "ConfigMap//from-kustomize" {
		t.Errorf("Chart.yaml + kustomization.yaml: %s, want the kustomization (Argo's discovery)", got)
	}
	objs, err = renderApp(t, env, "metadata: {name: web, namespace: argocd}\nspec:\n  source: {repoURL: r, path: over}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(objs); got != "ConfigMap//from-app-file" {
		t.Errorf(".argocd-source files: %s", got)
	}
}

func TestRefOnlySourceRendersNothing(t *testing.T) {
	env := checkout(t, map[string]string{"app/a.yaml": cmNamed("a"), "b.yaml": cmNamed("root-file")})
	objs, err := renderApp(t, env, `metadata: {name: web, namespace: argocd}
spec:
  destination: {namespace: shop}
  sources:
    - {repoURL: r, path: app}
    - {repoURL: r, ref: values}
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(objs); got != "ConfigMap/shop/a" {
		t.Errorf("rendered %s", got)
	}
}

func TestOwner(t *testing.T) {
	r := New(Options{Owner: func(live *unstructured.Unstructured) (string, string, bool) {
		return "argocd", live.GetLabels()["app"], live.GetLabels()["app"] != ""
	}})
	live := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}}}
	ref, ok := r.Owner(live)
	if !ok || ref.Name != "web" || ref.GVK.Kind != "Application" || !r.Handles(app(t, "metadata: {name: x}\n")) {
		t.Errorf("owner %v %v", ref, ok)
	}
	if _, ok := New(Options{}).Owner(live); ok {
		t.Error("owner without an Owner function")
	}
}

func TestKustomizeBuildOptions(t *testing.T) {
	files := map[string]string{
		"k/kustomization.yaml": "resources: [../shared/cm.yaml]\n",
		"shared/cm.yaml":       cmNamed("shared"),
	}
	spec := "metadata: {name: x, namespace: argocd}\nspec:\n  source: {repoURL: r, path: k}\n"
	// kustomize build's default: a file outside the kustomization root is
	// refused.
	if _, err := renderApp(t, checkout(t, files), spec); err == nil || !strings.Contains(err.Error(), "kustomize build k") {
		t.Errorf("file outside the kustomization root: %v", err)
	}
	withCM := func(opts string) map[string]string {
		f := map[string]string{"argocd-cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata: {kustomize.buildOptions: '" + opts + "'}\n"}
		for k, v := range files {
			f[k] = v
		}
		return f
	}
	objs, err := renderApp(t, checkout(t, withCM("--load-restrictor LoadRestrictionsNone")), spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(objs); got != "ConfigMap//shared" {
		t.Errorf("rendered %s", got)
	}
	if _, err := renderApp(t, checkout(t, withCM("--enable-helm")), spec); !errors.Is(err, ErrUnsupported) {
		t.Errorf("--enable-helm: %v", err)
	}
}

// Without kubeVersion/apiVersions in the source, the chart sees the
// destination cluster's, as the controller sends them (major.minor only);
// the source's own values win.
func TestHelmCapabilitiesFromCluster(t *testing.T) {
	files := map[string]string{
		"charts/caps/Chart.yaml": "apiVersion: v2\nname: caps\nversion: 0.1.0\n",
		"charts/caps/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: caps}
data:
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  widgets: {{ .Capabilities.APIVersions.Has "example.com/v1/Widget" | quote }}
`,
	}
	env := checkout(t, files)
	calls := 0
	env.Capabilities = func(context.Context) (*render.Capabilities, error) {
		calls++
		return &render.Capabilities{KubeVersion: "v1.37.2", Major: "1", Minor: "37+", APIVersions: []string{"v1", "example.com/v1", "example.com/v1/Widget"}}, nil
	}
	spec := "metadata: {name: caps, namespace: argocd}\nspec:\n  destination: {namespace: shop}\n  source: {repoURL: r, path: charts/caps%s}\n"
	data := func(extra string) map[string]string {
		t.Helper()
		objs, err := renderApp(t, env, strings.Replace(spec, "%s", extra, 1))
		if err != nil {
			t.Fatal(err)
		}
		d, _, _ := unstructured.NestedStringMap(find(t, objs, "ConfigMap", "caps").Object, "data")
		return d
	}
	if d := data(""); d["kube"] != "v1.37.0" || d["widgets"] != "true" {
		t.Errorf("cluster capabilities: %v, want kube v1.37.0 (major.minor) and the Widget API", d)
	}
	if d := data(`, helm: {kubeVersion: "1.30.0", apiVersions: [v1]}`); d["kube"] != "v1.30.0" || d["widgets"] != "false" {
		t.Errorf("the source's kubeVersion/apiVersions: %v, want v1.30.0 and no Widget API", d)
	}
	env.Capabilities = func(context.Context) (*render.Capabilities, error) { return nil, errors.New("forbidden") }
	if _, err := renderApp(t, env, strings.Replace(spec, "%s", "", 1)); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("capabilities error: %v", err)
	}
	if calls == 0 {
		t.Error("capabilities never read")
	}
}

// TestHelmBounds: an Application's chart is bounded as a HelmRelease's
// is (internal/render TemplateFuncs, Bounded, CheckTree): a nested until
// stops at the loop budget, a template linked out of the checkout is not
// read (issue 29).
func TestHelmBounds(t *testing.T) {
	spec := `metadata: {name: loop, namespace: argocd}
spec:
  destination: {namespace: shop}
  source: {repoURL: https://example.com/charts.git, path: charts/c}
`
	env := checkout(t, map[string]string{
		"charts/c/Chart.yaml":        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"charts/c/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {v: \"{{ range until 100000 }}{{ range until 100000 }}x{{ end }}{{ end }}\"}\n",
	})
	_, err := renderApp(t, env, spec)
	if err == nil || !strings.Contains(err.Error(), "until would make 100000 more items") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("nested until: %v", err)
	}
	// The time bound names the chart and the template running.
	env = checkout(t, map[string]string{
		"charts/c/Chart.yaml":          "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"charts/c/templates/a.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"charts/c/templates/slow.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {v: \"{{ range 300000000 }}{{ end }}\"}\n",
	})
	env.RenderLimits = bound.Limits{Timeout: 100 * time.Millisecond}
	_, err = renderApp(t, env, spec)
	if err == nil || !strings.Contains(err.Error(), "chart charts/c, template c/templates/slow.yaml") || !strings.Contains(err.Error(), "still running after 100ms") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a slow template: %v", err)
	}
	outside := filepath.Join(t.TempDir(), "hostname")
	if err := os.WriteFile(outside, []byte("secret-host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env = checkout(t, map[string]string{"charts/c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n"})
	if err := os.MkdirAll(filepath.Join(env.Root, "charts/c/templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(env.Root, "charts/c/templates/leak.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err = renderApp(t, env, spec)
	if err == nil || !strings.Contains(err.Error(), "outside the checkout") || strings.Contains(err.Error(), "secret-host") {
		t.Fatalf("template linked outside: %v", err)
	}
}

// TestKustomizeRemoteBase: --no-remote-bases covers an Application's
// kustomize source too, refused before any connection is made; without
// it the fetch is said and bounded in time, naming the URL (issue 29).
func TestKustomizeRemoteBase(t *testing.T) {
	srv := testutil.NewSilentServer(t)
	url := "http://" + srv.Addr + "/base/deploy.yaml"
	env := checkout(t, map[string]string{"app/kustomization.yaml": "resources:\n- " + url + "\n"})
	spec := `metadata: {name: remote, namespace: argocd}
spec:
  destination: {namespace: shop}
  source: {repoURL: https://example.com/apps.git, path: app}
`
	env.NoRemoteBases = true
	_, err := renderApp(t, env, spec)
	if err == nil || !strings.Contains(err.Error(), "refused by --no-remote-bases") || !strings.Contains(err.Error(), url) {
		t.Fatalf("with --no-remote-bases: %v", err)
	}
	if n := srv.Accepted(); n != 0 {
		t.Fatalf("--no-remote-bases still connected %d times", n)
	}

	env.NoRemoteBases = false
	env.FetchTimeout = 300 * time.Millisecond
	var warned []string
	env.Warn = func(m string) { warned = append(warned, m) }
	_, err = renderApp(t, env, spec)
	if err == nil || !strings.Contains(err.Error(), "still running after 300ms (fetching "+url+")") {
		t.Fatalf("silent server: %v", err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], url) {
		t.Errorf("warned %q", warned)
	}
}

// TestWarnsOfAnotherRepository: an Application whose repoURL is not the
// checkout's repository (its git remote) is rendered from the checkout's
// path of the same name with a one-line warning naming the URL and
// --source-map; the checkout's own URL (written another way) and a
// mapped URL are not warned of.
func TestWarnsOfAnotherRepository(t *testing.T) {
	dir := testutil.CopyTree(t, "testdata/application-of-another-repository", t.TempDir())
	testutil.WriteFile(t, dir, ".git/config", "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://github.com/example/platform.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
	for _, c := range []struct {
		app    string
		mapped bool
		warn   bool
	}{{"own", false, false}, {"other", false, true}, {"other", true, false}} {
		env, err := render.NewEnv(dir)
		if err != nil {
			t.Fatal(err)
		}
		if c.mapped {
			env.SourceMap = map[string]string{"https://github.com/example/other.git": dir}
		}
		var warnings []string
		env.Warn = func(msg string) { warnings = append(warnings, msg) }
		var obj *unstructured.Unstructured
		for _, f := range env.Files {
			if f.GetName() == c.app {
				obj = f
			}
		}
		objs, err := New(Options{Tracking: tracking}).Render(context.Background(), env, obj)
		if err != nil || len(objs) != 1 {
			t.Fatalf("%s: %d objects, %v", c.app, len(objs), err)
		}
		want := []string(nil)
		if c.warn {
			want = []string{`Application other: source https://github.com/example/other.git is not the checkout's repository: rendered from the checkout's path "apps/web" instead; map it with --source-map https://github.com/example/other.git=DIR`}
		}
		if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s (mapped %v): warnings %q, want %q", c.app, c.mapped, warnings, want)
		}
	}
}
