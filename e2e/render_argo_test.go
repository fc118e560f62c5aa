//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// argoRenderFiles is the checkout of TestRenderArgoGroundTruth under
// render-<ns>/: a directory app (recurse, an excluded file), a
// kustomization, and a chart whose values come from another source.
func argoRenderFiles(p string) map[string]string {
	return map[string]string{
		p + "/dir/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: top}
data: {k: v}
`,
		p + "/dir/sub/cm.json": `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nested"}, "data": {"k": "json"}}
`,
		p + "/dir/sub/skip.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: excluded}
`,
		p + "/dir/notes.yaml": "just: a values-like file, not a manifest\n",
		p + "/kust/kustomization.yaml": `resources: [deploy.yaml]
`,
		p + "/kust/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: app, image: "nginx:1.27"}]}
`,
		p + "/charts/web/Chart.yaml":            "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		p + "/charts/web/values.yaml":           "replicas: 1\ngreeting: chart default\nregion: none\n",
		p + "/charts/web/templates/deploy.yaml": renderLabChart["templates/deploy.yaml"],
		p + "/charts/web/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-settings}
data:
  release-namespace: {{ .Release.Namespace }}
  tier: {{ .Values.tier | default "none" | quote }}
  csv: {{ .Values.csv | default "" | quote }}
`,
		p + "/values/web.yaml": "greeting: from the values repo\nreplicas: 2\n",
	}
}

// TestRenderArgoGroundTruth holds `render --app` against the real Argo CD
// repo-server (kustomize v5.7 and helm v3.18 binaries, as Argo ships) on
// the same Git repository: the manifests Argo CD generates (GET
// /api/v1/applications/NAME/manifests, `argocd app manifests NAME
// --source git`) must be ours, object for object. The one reviewed
// difference: the API returns the generated manifests before the
// controller puts namespaced objects without a namespace into the
// destination namespace (controller/state.go DeduplicateTargetObjects), a
// step render includes; the test fills those namespaces on Argo's side.
// Then kubectl drifts the multi-source Helm app's objects and explain
// --source must give explain -f's report with the hand-rendered manifest.
func TestRenderArgoGroundTruth(t *testing.T) {
	a := RealArgoCD(t)
	ns := E.argoNamespace(t, a, "render")
	p := "render-" + ns
	a.Commit(t, "add "+p, argoRenderFiles(p))

	// source is the spec of an Application of the repo's directory
	// p/path, with more of its source (YAML at source's fields' indentation).
	source := func(path, more string) string {
		return fmt.Sprintf(`  project: default
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  source:
    repoURL: %q
    targetRevision: HEAD
    path: %s/%s
`, ns, a.RepoURL, p, path) + more
	}
	apps := map[string]string{
		"dir-" + ns: source("dir", `    directory: {recurse: true, exclude: "sub/skip.yaml"}
`),
		"kust-" + ns: source("kust", `    kustomize:
      namePrefix: p-
      images: ["nginx:1.27.3"]
      commonLabels: {team: api}
      commonAnnotations: {owner: e2e}
      nameSuffix: -v1
      replicas: [{name: api, count: 3}]
      patches:
        - target: {kind: Deployment, name: api}
          patch: |
            - {op: add, path: /spec/minReadySeconds, value: 5}
`),
		"helm-" + ns: fmt.Sprintf(`  project: default
  destination: {server: https://kubernetes.default.svc, namespace: %[2]s}
  sources:
    - repoURL: %[1]q
      targetRevision: HEAD
      path: %[3]s/charts/web
      helm:
        releaseName: web
        valueFiles: [$values/%[3]s/values/web.yaml, absent.yaml]
        ignoreMissingValueFiles: true
        valuesObject: {region: eu-west-1}
        parameters: [{name: tier, value: backend}, {name: csv, value: "a,b"}, {name: replicas, value: "2", forceString: false}]
    - repoURL: %[1]q
      targetRevision: HEAD
      ref: values
`, a.RepoURL, ns, p),
	}
	for name, spec := range apps {
		a.CreateApp(t, name, "", spec)
		t.Cleanup(func() {
			if os.Getenv("DRIFT_E2E_KEEP") == "" {
				_ = a.kubectlRaw("", "-n", a.Namespace, "delete", "application", name, "--wait=false")
			}
		})
	}
	for name := range apps {
		a.waitOperation(t, name, 120*time.Second)
	}

	for name := range apps {
		theirs := argoManifests(t, a, name)
		for _, o := range theirs {
			u := unstructured.Unstructured{Object: o}
			if u.GetNamespace() == "" {
				// Reviewed difference (see the test's comment): every
				// object here is namespaced.
				u.SetNamespace(ns)
			}
		}
		res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, "render", "--source", a.RepoDir, "--app", name, "--from-cluster", "-o", "json")
		if res.Code != 0 {
			t.Fatalf("render --app %s: exit %d: %s", name, res.Code, res.Stderr)
		}
		var list struct {
			Items []map[string]any `json:"items"`
		}
		DecodeJSON(t, res.Stdout, &list)
		if len(list.Items) == 0 {
			t.Fatalf("render --app %s: no objects", name)
		}
		if got, want := sortedYAML(t, list.Items), sortedYAML(t, theirs); got != want {
			t.Errorf("%s: render differs from Argo CD's repo-server:\n--- ours\n%s\n--- Argo CD\n%s", name, got, want)
		}
	}

	// Drift the multi-source Helm app's Deployment by kubectl, then
	// explain --source vs explain -f with the hand-rendered manifest.
	a.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=5")
	a.Kubectl(t, "-n", ns, "set", "env", "deployment/web", "GREETING=edited")
	hand := fluxWrite(t, t.TempDir(), "hand-rendered.yaml", deployWeb{
		Namespace:   ns,
		Annotations: `argocd.argoproj.io/tracking-id: "helm-` + ns + `:apps/Deployment:` + ns + `/web"`,
		Replicas:    2,
		Image:       "nginx:1.27",
		Env:         `{name: GREETING, value: "from the values repo"}, {name: REGION, value: "eu-west-1"}`,
	}.YAML())
	drift := func(t testing.TB, args ...string) Result {
		t.Helper()
		return E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, args...)
	}
	src := explainAgrees(t, drift, "deployment/web", ns, hand, "--source", a.RepoDir)
	if src.Code != 1 {
		t.Fatalf("explain --source and -f: exit %d (%s); want 1 (drift) both", src.Code, src.Stderr)
	}
	x := reportWithout(t, src.Stdout)
	for _, want := range []string{`"path": "/spec/replicas"`, `"path": "/spec/template/spec/containers/0/env/0/value"`} {
		if !strings.Contains(x, want) {
			t.Errorf("explain --source does not report %s:\n%s", want, x)
		}
	}
}

// argoManifests is GET /api/v1/applications/NAME/manifests: the manifests
// the repo-server generated from Git, as `argocd app manifests NAME
// --source git` prints them.
func argoManifests(t *testing.T, a *ArgoCD, name string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, err := a.api(ctx, http.MethodGet, "/api/v1/applications/"+name+"/manifests", nil)
	if err != nil {
		t.Fatalf("manifests of %s: %v", name, err)
	}
	var resp struct {
		Manifests []string `json:"manifests"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatalf("manifests of %s: %v\n%s", name, err, b)
	}
	var out []map[string]any
	for _, m := range resp.Manifests {
		var o map[string]any
		if err := json.Unmarshal([]byte(m), &o); err != nil {
			t.Fatalf("manifests of %s: %v", name, err)
		}
		out = append(out, o)
	}
	return out
}
