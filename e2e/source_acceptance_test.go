//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestSourceAcceptance is issue 16's acceptance for Flux: one checkout
// holds a Flux Kustomization's directory (postBuild.substituteFrom a
// ConfigMap on the cluster, no kustomization.yaml) and a HelmRelease's
// chart (valuesFrom a ConfigMap, whole and valuesKey/targetPath). The real
// kustomize-controller and helm-controller of the Flux lab apply them;
// kubectl drifts the live objects (scale, edit, label); then, for every
// drifted object, explain --source gives the report of explain -f with
// hand-rendered manifests, and scan --source finds the same drifted
// fields with the same verdicts.
func TestSourceAcceptance(t *testing.T) {
	l := lab(t)
	l.helm(t)
	ns := l.namespace(t, "source")

	// What the engines read on the cluster.
	l.kubectl(t, RunOpts{}, "-n", ns, "create", "configmap", "vars", "--from-literal=greeting=hello from the cluster", "--from-literal=tier=frontend")
	l.kubectl(t, RunOpts{}, "-n", ns, "create", "configmap", "web-values", "--from-literal=values.yaml=replicas: 3\ngreeting: from valuesFrom\n", "--from-literal=region=eu-west-1")

	// The Kustomization, applied by kustomize-controller from the
	// GitRepository's artifact (the checkout's app/ directory).
	rev := l.gitRepo(t, ns, renderLabFiles)
	l.kustomization(t, ns, rev, `targetNamespace: `+ns+`
namePrefix: p-
commonMetadata: {labels: {team: web}}
postBuild:
  substituteFrom: [{kind: ConfigMap, name: vars}]
`)

	// The HelmRelease, installed by helm-controller from the chart the
	// checkout's charts/web holds (packaged as its HelmChart artifact).
	dir := t.TempDir()
	renderLabHelmChart(t, l, ns, dir)
	l.helmRelease(t, ns, "web", `valuesFrom:
  - {kind: ConfigMap, name: web-values}
  - {kind: ConfigMap, name: web-values, valuesKey: region, targetPath: region}
`)

	// The checkout: app/ is the GitRepository's content, charts/ the chart
	// repository's; --source-map maps both URLs into it.
	for name, body := range renderLabFiles {
		fluxWrite(t, dir, name, body)
	}
	// The checkout is a plain directory, not a git repository: the
	// GitRepository's ref cannot be read from history, and
	// --working-tree says the directory is what to render (without it
	// the render says so in a warning).
	srcArgs := []string{"--source", dir, "--working-tree",
		"--source-map", "https://example.invalid/repo.git=" + filepath.Join(dir, "app"),
		"--source-map", "https://charts.example.invalid=" + filepath.Join(dir, "charts")}

	// Drift, with kubectl (KUBE_EDITOR is split on spaces: none in sed's
	// expression, and no backslash, which would hand it to a shell).
	l.kubectl(t, RunOpts{}, "-n", ns, "scale", "deployment/p-web", "--replicas=5")
	l.kubectl(t, RunOpts{Env: []string{"KUBE_EDITOR=sed -i s/from.valuesFrom/edited/"}}, "-n", ns, "edit", "deployment/web")
	l.kubectl(t, RunOpts{}, "-n", ns, "label", "service/p-web", "team=ops", "--overwrite")
	l.kubectl(t, RunOpts{}, "-n", ns, "label", "service/web", "oncall=alice")

	// Hand-rendered: what each controller applied, written out by hand.
	ksLabels := "team: web, kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: " + ns
	helmLabels := "app.kubernetes.io/managed-by: Helm, helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: " + ns
	helmAnnotations := "meta.helm.sh/release-name: web, meta.helm.sh/release-namespace: " + ns
	env := `{name: GREETING, value: "%s"}, {name: REGION, value: "eu-west-1"}`
	hand := fluxWrite(t, t.TempDir(), "hand-rendered.yaml", docs(
		deployWeb{Name: "p-web", Namespace: ns, Labels: "tier: frontend, " + ksLabels, Replicas: 2, Image: "nginx:1.27",
			Env: fmt.Sprintf(env, "hello from the cluster")}.YAML(),
		fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: p-web, namespace: %s, labels: {%s}}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}
`, ns, ksLabels),
		deployWeb{Labels: helmLabels, Annotations: helmAnnotations, Replicas: 3, Image: "nginx:1.27",
			Env: fmt.Sprintf(env, "from valuesFrom")}.YAML(),
		fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: web, labels: {%s}, annotations: {%s}}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}
`, helmLabels, helmAnnotations)))

	// explain --source == explain -f, object by object.
	wantPaths := map[string]string{
		"Deployment/p-web": "/spec/replicas",
		"Deployment/web":   "/spec/template/spec/containers/0/env/0/value",
		"Service/p-web":    "/metadata/labels/team",
		"Service/web":      "/metadata/labels/oncall",
	}
	explained := map[string]string{}
	for obj, path := range wantPaths {
		src := explainAgrees(t, l.drift, obj, ns, hand, srcArgs...)
		var rep report
		DecodeJSON(t, src.Stdout, &rep)
		if rep.DesiredSource != "rendered" {
			t.Errorf("%s: desiredSource %q, want rendered", obj, rep.DesiredSource)
		}
		explained[obj] = rep.fields()
		if !strings.Contains(explained[obj], path+" ") {
			t.Errorf("%s: the drift of %s is not reported: %s", obj, path, explained[obj])
		}
	}

	// scan --source: the same fields, the same verdicts, each owner
	// rendered once (no render warning).
	res := l.drift(t, append([]string{"scan", "-n", ns, "-o", "json"}, srcArgs...)...)
	if res.Code != 1 {
		t.Fatalf("scan --source: exit %d, want 1 (drift): %s", res.Code, res.Stderr)
	}
	if strings.Contains(res.Stderr, "warning") {
		t.Errorf("scan --source warned: %s", res.Stderr)
	}
	var scanned struct {
		Items []report `json:"items"`
	}
	DecodeJSON(t, res.Stdout, &scanned)
	got := map[string]string{}
	for _, it := range scanned.Items {
		if it.DesiredSource != "rendered" {
			t.Errorf("scan: %s/%s desiredSource %q, want rendered", it.Resource.Kind, it.Resource.Name, it.DesiredSource)
		}
		got[it.Resource.Kind+"/"+it.Resource.Name] = it.fields()
	}
	for obj, want := range explained {
		if got[obj] != want {
			t.Errorf("%s: scan --source found\n  %s\nexplain --source\n  %s", obj, got[obj], want)
		}
	}
	if len(got) != len(explained) {
		t.Errorf("scan --source reported %d objects, explain %d: %v", len(got), len(explained), got)
	}
}

// report is the part of a drift report TestSourceAcceptance compares.
type report struct {
	Resource struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"resource"`
	DesiredSource string `json:"desiredSource"`
	Drifts        []struct {
		Path     string `json:"path"`
		Change   string `json:"change"`
		Desired  any    `json:"desired"`
		Live     any    `json:"live"`
		Verdicts []struct {
			Engine string `json:"engine"`
			Kind   string `json:"verdict"`
		} `json:"verdicts"`
	} `json:"drifts"`
}

// fields is one line per drifted field: path, change, values, verdicts.
func (r report) fields() string {
	var out []string
	for _, d := range r.Drifts {
		var vs []string
		for _, v := range d.Verdicts {
			vs = append(vs, v.Engine+":"+v.Kind)
		}
		out = append(out, fmt.Sprintf("%s %s desired=%v live=%v [%s]", d.Path, d.Change, d.Desired, d.Live, strings.Join(vs, ",")))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
