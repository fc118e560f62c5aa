package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// cachedTool is the binary NAME under ~/.cache/kubectl-drift/bin/DIR-v*
// (the newest), or "" (the test that compares with it is then skipped).
func cachedTool(dir, name string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(home, ".cache", "kubectl-drift", "bin", dir+"-v*", name))
	if len(matches) == 0 {
		return ""
	}
	return matches[len(matches)-1]
}

// helmTemplate runs `helm template` (the binary given) and returns its
// objects by key, hooks left out: helm-controller neither applies hooks
// with the release manifest nor checks them for drift, and Argo CD's
// repo-server gets them from helm template but applies them as sync
// hooks, not as the application's objects (the render tests compare the
// objects an engine keeps applied).
func helmTemplate(t *testing.T, helm, dir string, dropHooks bool, args ...string) map[string]map[string]any {
	t.Helper()
	cmd := exec.Command(helm, append([]string{"template"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	objs := objectsByKey(t, out)
	for k, o := range objs {
		meta, _ := o["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		if _, hook := ann["helm.sh/hook"]; hook && dropHooks {
			delete(objs, k)
		}
	}
	if len(objs) == 0 {
		t.Fatalf("helm template %s printed no object", strings.Join(args, " "))
	}
	return objs
}

// markRelease adds what helm-controller's install writes on every object
// beyond `helm template`'s output: Helm's ownership metadata (helm.sh/helm/v4
// pkg/action/validate.go setMetadataVisitor: app.kubernetes.io/managed-by
// Helm, meta.helm.sh/release-name and -namespace) and the origin labels of
// its post-renderer chain (helm-controller internal/postrender/build.go
// BuildPostRenderers, NewOriginLabels: helm.toolkit.fluxcd.io/name and
// /namespace of the HelmRelease).
func markRelease(objs map[string]map[string]any, release, releaseNS, hrName, hrNS string) {
	for _, o := range objs {
		meta := o["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			meta["labels"] = labels
		}
		labels["app.kubernetes.io/managed-by"] = "Helm"
		labels["helm.toolkit.fluxcd.io/name"] = hrName
		labels["helm.toolkit.fluxcd.io/namespace"] = hrNS
		ann, _ := meta["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			meta["annotations"] = ann
		}
		ann["meta.helm.sh/release-name"] = release
		ann["meta.helm.sh/release-namespace"] = releaseNS
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRenderHelmReleaseLocalChartOnCorpus renders a HelmRelease whose
// chart is a directory of its own repository (fluxcd/helm-controller at
// the corpus commit: config/testdata/upgrade-chart-name-change/upgrade.yaml,
// chart config/testdata/charts/upgrade-chart-name-change/podinfo-renamed
// from GitRepository "this", inline values; its end-to-end test applies it
// in namespace default) with `kubectl drift render --kube-version` (the
// chart wants Kubernetes >= 1.23; helm-controller gives Helm the cluster's
// discovery, here the cached kube-apiserver's version) and with `helm
// template` (the cached Helm v4 CLI, the Helm helm-controller v1.6 links)
// given what helm-controller gives Helm (internal/action/install.go
// newInstall: release name GetReleaseName() shortened, namespace
// GetReleaseNamespace(), SkipCRDs (CRDs are applied apart, by
// spec.install.crds, and are not in the release manifest), the chart's
// values with valuesFrom then spec.values over them (fluxcd/pkg/chartutil
// ChartValuesFromReferences). The objects must be equal.
//
// The second case is the same chart under a HelmRelease written by the
// test (the repository has none with these fields): valuesFrom a
// ConfigMap (a whole values document and a targetPath), targetNamespace
// without releaseName (release TARGETNS-NAME in TARGETNS) and a kustomize
// post-renderer patch (internal/postrender/kustomize.go, here `kustomize
// build` of helm template's output with the patch).
func TestRenderHelmReleaseLocalChartOnCorpus(t *testing.T) {
	helm := cachedTool("helm", "helm")
	if helm == "" {
		t.Skip("no cached helm CLI under ~/.cache/kubectl-drift/bin (make build-tools)")
	}
	src := testutil.CopyTree(t, filepath.Join(auditCorpus, "fluxcd_helm-controller"), filepath.Join(t.TempDir(), "helm-controller"))
	const chart = "config/testdata/charts/upgrade-chart-name-change/podinfo-renamed"

	t.Run("default/upgrade-chart-name-change", func(t *testing.T) {
		stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", src, "--helmrelease", "default/upgrade-chart-name-change", "--kube-version", "v1.37.2", "-o", "yaml")
		if code != ExitNoDrift {
			t.Fatalf("render exit %d: %s", code, stderr)
		}
		values := filepath.Join(t.TempDir(), "values.yaml")
		writeFile(t, values, "resources:\n  requests:\n    cpu: 100m\n    memory: 64Mi\n")
		want := helmTemplate(t, helm, src, true, "upgrade-chart-name-change", "./"+chart, "--namespace", "default", "--values", values, "--skip-tests", "--kube-version", "v1.37.2")
		markRelease(want, "upgrade-chart-name-change", "default", "upgrade-chart-name-change", "default")
		if d := cmp.Diff(want, objectsByKey(t, []byte(stdout))); d != "" {
			t.Errorf("render differs from helm template (-helm +render):\n%s", d)
		}
	})

	t.Run("default/valuesfrom", func(t *testing.T) {
		writeFile(t, filepath.Join(src, "drift-test", "helmrelease.yaml"), `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: valuesfrom
  namespace: default
spec:
  interval: 5m
  targetNamespace: staging
  chart:
    spec:
      chart: `+chart+`
      sourceRef:
        kind: GitRepository
        name: this
  valuesFrom:
    - kind: ConfigMap
      name: valuesfrom-config
      valuesKey: values.yaml
    - kind: ConfigMap
      name: valuesfrom-config
      valuesKey: color
      targetPath: ui.color
  values:
    replicaCount: 2
  postRenderers:
    - kustomize:
        patches:
          - target:
              kind: Deployment
            patch: |
              - op: add
                path: /metadata/labels/patched
                value: "yes"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: valuesfrom-config
  namespace: default
data:
  values.yaml: |
    ui:
      message: from a ConfigMap
      logo: https://example.com/logo.png
  color: "#f00000"
`)
		stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", src, "--helmrelease", "default/valuesfrom", "--kube-version", "v1.37.2", "-o", "yaml")
		if code != ExitNoDrift {
			t.Fatalf("render exit %d: %s", code, stderr)
		}
		tmp := t.TempDir()
		cm, spec := filepath.Join(tmp, "cm.yaml"), filepath.Join(tmp, "spec.yaml")
		writeFile(t, cm, "ui:\n  message: from a ConfigMap\n  logo: https://example.com/logo.png\n")
		writeFile(t, spec, "replicaCount: 2\n")
		plain := helmTemplate(t, helm, src, true, "staging-valuesfrom", "./"+chart, "--namespace", "staging",
			"--values", cm, "--set", "ui.color=#f00000", "--values", spec, "--skip-tests", "--kube-version", "v1.37.2")
		want := kustomizePatched(t, plain, `- op: add
  path: /metadata/labels/patched
  value: "yes"
`)
		markRelease(want, "staging-valuesfrom", "staging", "valuesfrom", "default")
		if d := cmp.Diff(want, objectsByKey(t, []byte(stdout))); d != "" {
			t.Errorf("render differs from helm template + kustomize (-helm +render):\n%s", d)
		}
	})
}

// kustomizePatched is `kustomize build` (the cached kustomize CLI) of
// objs with one JSON 6902 patch on every Deployment.
func kustomizePatched(t *testing.T, objs map[string]map[string]any, patch string) map[string]map[string]any {
	t.Helper()
	kustomize := cachedTool("argocd-kustomize", "kustomize")
	if kustomize == "" {
		t.Skip("no cached kustomize CLI under ~/.cache/kubectl-drift/bin")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "helm-output.yaml"), string(mustYAML(t, objs)))
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [helm-output.yaml]\npatches:\n  - target: {kind: Deployment}\n    patch: |\n"+indent(patch, "      "))
	out, err := exec.Command(kustomize, "build", dir).Output()
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	return objectsByKey(t, out)
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestRenderArgoHelmAppOnCorpus renders an Argo CD Application whose
// source is a Helm chart of its own repository (awslabs/data-on-eks at
// the corpus commit: infra/terraform/argocd-applications/event-store.yaml,
// path infra/terraform/manifests/event-store, helm.valuesObject,
// destination namespace logging) with `kubectl drift render --kube-version`
// (the destination cluster's version, the cached kube-apiserver's) and with the
// helm template Argo CD runs (the cached Helm v3.18 that Argo CD v3.2
// bundles), given the arguments the repo-server gives it
// (reposerver/repository/repository.go helmTemplate: --name-template the
// app name unless helm.releaseName, --namespace helm.namespace else the
// destination namespace, --kube-version and --api-versions of the
// destination cluster, the valuesObject as a --values file; util/helm/cmd.go
// template: --include-crds unless skipCrds). Argo CD keeps hooks (its sync
// hooks: the chart's PostSync Job). Then, as the application controller
// does, namespaced objects without a namespace take the destination
// namespace and each object gets the annotation tracking id
// (util/argo/resource_tracking.go, Argo CD 3's default method).
func TestRenderArgoHelmAppOnCorpus(t *testing.T) {
	helm := cachedTool("argocd-helm", "helm")
	if helm == "" {
		t.Skip("no cached Argo CD helm under ~/.cache/kubectl-drift/bin (make build-tools)")
	}
	src := testutil.CopyTree(t, filepath.Join(auditCorpus, "awslabs_data-on-eks"), filepath.Join(t.TempDir(), "data-on-eks"))
	stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", src, "--app", "argocd/event-store", "--kube-version", "v1.37.2", "-o", "yaml")
	if code != ExitNoDrift {
		t.Fatalf("render exit %d: %s", code, stderr)
	}
	values := filepath.Join(t.TempDir(), "values.yaml")
	writeFile(t, values, "s3_endpoint: ${clickhouse_s3_endpoint}\n")
	want := helmTemplate(t, helm, filepath.Join(src, "infra/terraform/manifests/event-store"), false, ".",
		"--name-template", "event-store", "--namespace", "logging", "--kube-version", "v1.37.2", "--values", values, "--include-crds")
	if len(want) < 4 {
		t.Fatalf("helm template gave %d objects, want the chart's ServiceAccount, KeeperCluster, ClickHouseCluster and Job", len(want))
	}
	for _, obj := range want {
		meta := obj["metadata"].(map[string]any)
		if meta["namespace"] == nil {
			meta["namespace"] = "logging"
		}
		group := ""
		if gv := strings.SplitN(obj["apiVersion"].(string), "/", 2); len(gv) == 2 {
			group = gv[0]
		}
		ann, _ := meta["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			meta["annotations"] = ann
		}
		ann["argocd.argoproj.io/tracking-id"] = fmt.Sprintf("event-store:%s/%s:%s/%s", group, obj["kind"], meta["namespace"], meta["name"])
	}
	want = objectsByKey(t, mustYAML(t, want))
	if d := cmp.Diff(want, objectsByKey(t, []byte(stdout))); d != "" {
		t.Errorf("render differs from Argo CD's helm template (-argo +render):\n%s", d)
	}
}

// TestRenderNamesUnreachableSources: render names every source it cannot
// reach, one line each, instead of skipping it: an Argo CD Application's
// chart from a remote Helm repository (offline), a Flux HelmRelease's
// chart from a HelmRepository, and a valuesFrom Secret the checkout does
// not hold; the HelmRelease whose chart and values are all in the
// checkout would render, but one missing valuesFrom fails it whole, as
// helm-controller fails the release. The exit code is 2.
func TestRenderNamesUnreachableSources(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "charts/web/Chart.yaml"), "apiVersion: v2\nname: web\nversion: 0.1.0\n")
	writeFile(t, filepath.Join(dir, "charts/web/values.yaml"), "greeting: hi\n")
	writeFile(t, filepath.Join(dir, "charts/web/templates/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {greeting: {{ .Values.greeting | quote }}}\n")
	writeFile(t, filepath.Join(dir, "apps/all.yaml"), `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: remote-chart, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://charts.example.invalid, chart: podinfo, targetRevision: 6.0.0}
  destination: {server: https://kubernetes.default.svc, namespace: web}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: web}
spec:
  interval: 1m
  chart: {spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}}}
  valuesFrom:
    - {kind: Secret, name: web-secret-values}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: web}
spec:
  interval: 1m
  chart: {spec: {chart: podinfo, sourceRef: {kind: HelmRepository, name: podinfo}}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: podinfo, namespace: web}
spec: {url: https://stefanprodan.github.io/podinfo}
`)
	stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", dir, "-o", "yaml")
	if code != ExitFailure {
		t.Errorf("exit %d, want %d", code, ExitFailure)
	}
	if strings.TrimSpace(stdout) != "" {
		t.Errorf("objects printed although every engine object failed:\n%s", stdout)
	}
	for _, want := range []string{
		`error: Application/argocd/remote-chart: spec.source (https://charts.example.invalid ): chart "podinfo" from Helm repository https://charts.example.invalid: not available offline (map the repository URL with --source-map URL=DIR holding DIR/podinfo)`,
		`error: HelmRelease/web/podinfo: chart "podinfo" from HelmRepository/web/podinfo: not available offline`,
		`error: HelmRelease/web/web: could not resolve Secret chart values reference 'web/web-secret-values' with key 'values.yaml': secret "web-secret-values" not found`,
		`error: 3 of 3 engine objects failed to render`,
	} {
		if !strings.Contains(stderr, want+"\n") && !strings.Contains(stderr, want+" ") {
			t.Errorf("stderr does not name %q:\n%s", want, stderr)
		}
	}
}
