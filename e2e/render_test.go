//go:build e2e

package e2e

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// renderLabOverlay is what both ground truths lay over the manifests with
// kustomize: a Kustomization's spec fields, and the same as a
// HelmRelease's kustomize post-renderer.
const renderLabOverlay = `images: [{name: nginx, newTag: "1.27.3"}]
patches:
  - target: {kind: Service}
    patch: |
      - {op: add, path: /spec/sessionAffinity, value: ClientIP}
`

// renderLabFiles is the checkout: no kustomization.yaml (Flux generates
// one), variables from the inline map, a ConfigMap on the cluster and a
// default, and a ConfigMap marked to skip substitution.
var renderLabFiles = map[string]string{
	"app/deploy.yaml": deployWeb{Labels: `tier: "${tier}"`, Replicas: 2, Image: "nginx:1.27",
		Env: `{name: GREETING, value: "${greeting}"}, {name: REGION, value: "${region:=eu-west-1}"}`}.YAML(),
	"app/literal.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: literal
  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}
data: {text: "${greeting}"}
`,
	"app/svc.yaml": `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`,
}

// TestRenderFluxGroundTruth renders a Kustomization with postBuild
// substitution from a cluster ConfigMap, namePrefix, images, a patch and
// commonMetadata, and holds the render against the real tools: `flux build
// kustomization` on the same inputs (equal after sorting) and the objects
// the real kustomize-controller applied (its inventory, and every rendered
// field in the live object with kustomize-controller owning it). Then
// kubectl drifts the live objects and explain --source must give the
// report of explain -f with the hand-rendered manifests.
func TestRenderFluxGroundTruth(t *testing.T) {
	l := lab(t)
	flux := fluxCLI(t)
	ns := l.namespace(t, "render")
	l.kubectl(t, RunOpts{}, "-n", ns, "create", "configmap", "vars", "--from-literal=greeting=hello from the cluster", "--from-literal=tier=frontend")
	spec := `targetNamespace: ` + ns + `
namePrefix: p-
` + renderLabOverlay + `commonMetadata: {labels: {team: web}}
postBuild:
  substitute: {tier: backend-overridden-below}
  substituteFrom: [{kind: ConfigMap, name: vars}, {kind: Secret, name: absent, optional: true}]
`
	// Inline variables win over substituteFrom (fluxcd/pkg/kustomize
	// LoadVariables then the inline map): tier is the inline value.
	rev := l.gitRepo(t, ns, renderLabFiles)
	l.kustomization(t, ns, rev, spec)

	dir := t.TempDir()
	for name, body := range renderLabFiles {
		fluxWrite(t, dir, name, body)
	}
	// The Kustomization as the lab created it (path ./), outside the
	// checkout, for flux build.
	ksFile := fluxWrite(t, t.TempDir(), "ks.yaml", labKustomization(ns, spec))

	// Ours, reading the ConfigMap from the lab cluster.
	res := l.drift(t, "render", "--source", dir, "--kustomization", ns+"/apps", "--from-cluster", "-o", "json")
	if res.Code != 0 {
		t.Fatalf("render: exit %d: %s", res.Code, res.Stderr)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	DecodeJSON(t, res.Stdout, &list)
	ours := sortedYAML(t, list.Items)

	// flux build kustomization on the same checkout, same cluster.
	fb := E.Run(t, RunOpts{Kubeconfig: l.kubeconfig}, flux, "build", "kustomization", "apps", "-n", ns,
		"--path", dir, "--kustomization-file", ksFile)
	if fb.Code != 0 {
		t.Fatalf("flux build: %s", fb.Stderr)
	}
	theirs := yamlDocs(t, "flux build", fb.Stdout)
	if got, want := ours, sortedYAML(t, theirs); got != want {
		t.Errorf("render differs from flux build kustomization:\n--- ours\n%s\n--- flux build\n%s", got, want)
	}

	// The real kustomize-controller: the same objects (its inventory), and
	// every rendered field in the live object.
	ks := l.getJSON(t, gvrKS, ns, "apps")
	entries, _, _ := unstructured.NestedSlice(ks, "status", "inventory", "entries")
	var inv, rendered []string
	for _, e := range entries {
		id, _ := e.(map[string]any)["id"].(string)
		inv = append(inv, id)
	}
	for _, o := range list.Items {
		u := unstructured.Unstructured{Object: o}
		gk := u.GroupVersionKind().GroupKind()
		rendered = append(rendered, u.GetNamespace()+"_"+u.GetName()+"_"+gk.Group+"_"+gk.Kind)
		live := l.getJSON(t, schema.GroupVersionResource{Group: gk.Group, Version: u.GroupVersionKind().Version, Resource: strings.ToLower(gk.Kind) + "s"}, u.GetNamespace(), u.GetName())
		if missing := notIn(o, live, ""); len(missing) > 0 {
			t.Errorf("%s/%s: rendered fields not so in the object kustomize-controller applied: %v", gk.Kind, u.GetName(), missing)
		}
	}
	sort.Strings(inv)
	sort.Strings(rendered)
	if !reflect.DeepEqual(inv, rendered) {
		t.Errorf("rendered objects %v, kustomize-controller's inventory %v", rendered, inv)
	}

	// Drift by kubectl, then explain --source vs explain -f.
	l.kubectl(t, RunOpts{}, "-n", ns, "scale", "deployment/p-web", "--replicas=5")
	l.kubectl(t, RunOpts{}, "-n", ns, "set", "env", "deployment/p-web", "GREETING=edited")
	l.kubectl(t, RunOpts{}, "-n", ns, "patch", "service/p-web", "--type=merge", "-p", `{"spec":{"sessionAffinity":"None"}}`)
	hand := fluxWrite(t, t.TempDir(), "hand-rendered.yaml", deployWeb{Name: "p-web", Namespace: ns,
		Labels:   "tier: backend-overridden-below, team: web, kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: " + ns,
		Replicas: 2, Image: "nginx:1.27.3",
		Env: `{name: GREETING, value: "hello from the cluster"}, {name: REGION, value: "eu-west-1"}`}.YAML()+`---
apiVersion: v1
kind: Service
metadata:
  name: p-web
  namespace: `+ns+`
  labels: {team: web, kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: `+ns+`}
spec:
  selector: {app: web}
  sessionAffinity: ClientIP
  ports: [{port: 80, targetPort: 8080}]
`)
	for _, obj := range []string{"deployment/p-web", "service/p-web"} {
		if src := explainAgrees(t, l.drift, obj, ns, hand, "--source", dir); src.Code != 1 {
			t.Fatalf("%s: explain --source and -f: exit %d (%s); want 1 (drift) both", obj, src.Code, src.Stderr)
		}
	}
}

// yamlDocs decodes the objects of a tool's multi-document YAML output.
func yamlDocs(t *testing.T, tool, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, doc := range strings.Split(out, "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s output: %v", tool, err)
		}
		if m != nil {
			objs = append(objs, m)
		}
	}
	return objs
}

// sortedYAML prints objects sorted by kind, namespace and name.
func sortedYAML(t *testing.T, objs []map[string]any) string {
	t.Helper()
	key := func(o map[string]any) string {
		u := unstructured.Unstructured{Object: o}
		return u.GetAPIVersion() + "/" + u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
	}
	sort.Slice(objs, func(i, j int) bool { return key(objs[i]) < key(objs[j]) })
	var b strings.Builder
	for _, o := range objs {
		y, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.String()
}

// notIn lists the paths of want's leaves that got lacks or holds with
// another value (lists compared item by item).
func notIn(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path}
		}
		var out []string
		for k, v := range w {
			out = append(out, notIn(v, g[k], path+"/"+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{path}
		}
		var out []string
		for i := range w {
			out = append(out, notIn(w[i], g[i], path+"/"+jsonIndex(i))...)
		}
		return out
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		return []string{path + "=" + string(a) + " (live " + string(b) + ")"}
	}
	return nil
}

func jsonIndex(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// reportWithout is the explain JSON report without its desired source
// (which says --source or -f) and times, re-marshalled for comparison.
func reportWithout(t *testing.T, out string) string {
	t.Helper()
	var r map[string]any
	DecodeJSON(t, out, &r)
	delete(r, "desiredSource")
	b, _ := json.MarshalIndent(r, "", "  ")
	return string(b)
}

// renderLabChart is the chart of TestRenderHelmGroundTruth.
var renderLabChart = map[string]string{
	"templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers:
        - name: app
          image: nginx:1.27
          env:
            - {name: GREETING, value: {{ .Values.greeting | quote }}}
            - {name: REGION, value: {{ .Values.region | quote }}}
`,
	"templates/svc.yaml": `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: 80, targetPort: 8080}]
`,
}

// renderLabHelmChart is renderLabChart as chart web in the lab for ns:
// HelmRepository repo (the URL charts.example.invalid, which --source-map
// maps to a checkout) and HelmChart web, whose artifact helm-controller
// installs from; and the same chart in the checkout dir (charts/web).
// The lab's chart has no values.yaml (its helmChart packs templates only),
// so the checkout's chart has none either.
func renderLabHelmChart(t *testing.T, l *fluxLab, ns, dir string) {
	t.Helper()
	l.create(t, schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmrepositories"}, `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: repo, namespace: `+ns+`}
spec: {interval: 1h, url: "https://charts.example.invalid"}
`)
	templates := map[string]string{}
	for n, c := range renderLabChart {
		templates[strings.TrimPrefix(n, "templates/")] = c
	}
	l.helmChart(t, ns, "web", templates)
	fluxWrite(t, dir, "charts/web/Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n")
	for n, c := range templates {
		fluxWrite(t, dir, "charts/web/templates/"+n, c)
	}
}

// TestRenderHelmGroundTruth renders a HelmRelease (chart in the checkout,
// values + valuesFrom with a targetPath, a kustomize post-renderer and
// commonMetadata) and holds it against what the real helm-controller
// installed from the same chart; then kubectl drifts the Deployment and
// explain --source must report as explain -f with the hand-rendered
// manifest.
func TestRenderHelmGroundTruth(t *testing.T) {
	l := lab(t)
	l.helm(t)
	ns := l.namespace(t, "render-helm")
	l.kubectl(t, RunOpts{}, "-n", ns, "create", "configmap", "web-values", "--from-literal=values.yaml=replicas: 3\ngreeting: from valuesFrom\n", "--from-literal=region=eu-west-1")
	// The lab's HelmChart names HelmRepository "repo"; helm-controller
	// reads only the HelmChart artifact, we read the repository's URL to
	// map it to the checkout's charts directory.
	dir := t.TempDir()
	renderLabHelmChart(t, l, ns, dir)
	l.helmRelease(t, ns, "web", `values: {replicas: 2}
valuesFrom:
  - {kind: ConfigMap, name: web-values}
  - {kind: ConfigMap, name: web-values, valuesKey: region, targetPath: region}
  - {kind: Secret, name: absent, optional: true}
postRenderers:
  - kustomize:
`+indent(renderLabOverlay, "      ")+`commonMetadata: {labels: {team: web}}
`)

	srcMap := "https://charts.example.invalid=" + filepath.Join(dir, "charts")
	res := l.drift(t, "render", "--source", dir, "--source-map", srcMap, "--helmrelease", ns+"/web", "--from-cluster", "-o", "json")
	if res.Code != 0 {
		t.Fatalf("render: exit %d: %s", res.Code, res.Stderr)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	DecodeJSON(t, res.Stdout, &list)
	var names []string
	for _, o := range list.Items {
		u := unstructured.Unstructured{Object: o}
		gvk := u.GroupVersionKind()
		names = append(names, gvk.Kind+"/"+u.GetName())
		live := l.getJSON(t, schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: strings.ToLower(gvk.Kind) + "s"}, ns, u.GetName())
		if missing := notIn(o, live, ""); len(missing) > 0 {
			t.Errorf("%s/%s: rendered fields not so in the object helm-controller applied: %v", gvk.Kind, u.GetName(), missing)
		}
	}
	sort.Strings(names)
	if got := strings.Join(names, ","); got != "Deployment/web,Service/web" {
		t.Errorf("rendered %s", got)
	}
	// The values as helm-controller composed them: inline replicas wins
	// over valuesFrom's (fluxcd/pkg/chartutil merges the inline values
	// last, after targetPath keys too).
	dep := l.getJSON(t, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, ns, "web")
	if r, _, _ := unstructured.NestedInt64(dep, "spec", "replicas"); r != 2 {
		t.Errorf("helm-controller applied replicas %d", r)
	}

	l.kubectl(t, RunOpts{}, "-n", ns, "scale", "deployment/web", "--replicas=6")
	l.kubectl(t, RunOpts{}, "-n", ns, "set", "env", "deployment/web", "REGION=us-east-1")
	hand := fluxWrite(t, t.TempDir(), "hand-rendered.yaml", deployWeb{
		Labels:      "team: web, app.kubernetes.io/managed-by: Helm, helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: " + ns,
		Annotations: "meta.helm.sh/release-name: web, meta.helm.sh/release-namespace: " + ns,
		Replicas:    2, Image: "nginx:1.27.3",
		Env: `{name: GREETING, value: "from valuesFrom"}, {name: REGION, value: "eu-west-1"}`}.YAML())
	// helm-controller's drift detection is off by default: the drift is
	// shown, and the exit code is whatever -f says; --source must agree.
	src := explainAgrees(t, l.drift, "deployment/web", ns, hand, "--source", dir, "--source-map", srcMap)
	a := reportWithout(t, src.Stdout)
	if !strings.Contains(a, `"path": "/spec/replicas"`) {
		t.Errorf("the replicas drift is not reported:\n%s", a)
	}
}
