//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// The Flux lab: the real kustomize-controller v1.9.6 and helm-controller
// v1.6.0 (built by hack/build-tools.sh) reconciling on a dedicated API
// server of their own, so they never act on the Kustomizations and
// HelmReleases that the other e2e tests create as plain objects on the
// shared cluster. Source-controller is played by the test: artifacts
// (tar.gz of a kustomize dir, packaged charts) are served from a loopback
// HTTP server and their url/revision/sha256 digest written into the status
// of GitRepository and HelmChart objects (DESIGN.md "Real Flux
// controllers").
//
// The lab is started lazily, once per test binary, and stopped by TestMain
// (stopFluxLab): the controllers, the HTTP server and the API server with
// its etcd. Nothing outlives `go test`.

const (
	// The lab's default ports. DRIFT_E2E_FLUX_LAB_PORTS=APISERVER/ETCD
	// moves it (own run dir too), so that a second test binary (make
	// differential: 16493/12431) runs its own lab beside the suites.
	labAPIServerPortDefault = "16453"
	labEtcdPortDefault      = "12391"
	// labReconcileTimeout bounds every wait for a controller: a controller
	// that is not running fails the test naming the object, never hangs it.
	labReconcileTimeout = 90 * time.Second
)

var (
	gvrGitRepo   = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"}
	gvrHelmChart = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmcharts"}
	gvrKS        = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
	gvrHR        = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
)

// fluxLab is the running lab. Tests only read it.
type fluxLab struct {
	// env is `hack/cluster.sh env` with the lab's variables (its
	// KUBECONFIG is the lab API server's admin kubeconfig).
	clusterEnv []string
	kubeconfig string
	dir        string
	dyn        dynamic.Interface
	srv        *httptest.Server
	files      *artifactFiles
	// procMu guards procs and logs: helm-controller starts later, from a
	// parallel test.
	procMu   sync.Mutex
	procs    []*exec.Cmd
	logs     map[string]string
	helmOnce sync.Once
	helmErr  error
}

type artifactFiles struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (a *artifactFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	b, ok := a.m[r.URL.Path]
	a.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(b)
}

var (
	labOnce sync.Once
	theLab  *fluxLab
	labErr  error
	// labStarted records the lab for TestMain's cleanup; it is written
	// once, inside labOnce, before anything is started.
	labStarted *fluxLab
)

// labPorts returns the lab's API server and etcd ports and its run dir
// name: the defaults, or DRIFT_E2E_FLUX_LAB_PORTS=APISERVER/ETCD.
func labPorts() (apiserver, etcd, dir string, err error) {
	v := os.Getenv("DRIFT_E2E_FLUX_LAB_PORTS")
	if v == "" {
		return labAPIServerPortDefault, labEtcdPortDefault, "cluster-flux", nil
	}
	a, e, ok := strings.Cut(v, "/")
	if !ok || strings.Trim(a, "0123456789") != "" || strings.Trim(e, "0123456789") != "" || a == "" || e == "" {
		return "", "", "", fmt.Errorf("DRIFT_E2E_FLUX_LAB_PORTS=%q: want APISERVER/ETCD ports, e.g. 16493/12431", v)
	}
	return a, e, "cluster-flux-" + a, nil
}

// labEnv is the variable set that points hack/cluster.sh at the lab's own
// API server (own run dir, ports).
func labEnv() ([]string, string, error) {
	api, etcd, dir, err := labPorts()
	if err != nil {
		return nil, "", err
	}
	return append(os.Environ(),
		"DRIFT_CLUSTER_DIR="+filepath.Join(toolCacheDir(), dir),
		"DRIFT_APISERVER_PORT="+api,
		"DRIFT_ETCD_PORT="+etcd,
	), api, nil
}

// lab returns the running lab, starting it on first use.
func lab(t *testing.T) *fluxLab {
	t.Helper()
	labOnce.Do(func() {
		l := &fluxLab{files: &artifactFiles{m: map[string][]byte{}}, logs: map[string]string{}}
		labStarted = l
		labErr = l.start()
		if labErr == nil {
			theLab = l
		}
	})
	if labErr != nil {
		t.Fatalf("flux lab: %v", labErr)
	}
	return theLab
}

func (l *fluxLab) start() error {
	paths, err := buildTools("kustomize-controller", "flux-crds")
	if err != nil {
		return err
	}
	bins := map[string]string{"kustomize-controller": paths[0], "flux-crds": paths[1]}
	cenv, apiPort, err := labEnv()
	if err != nil {
		return err
	}
	l.clusterEnv = cenv
	start := exec.Command(filepath.Join(E.Root, "hack", "cluster.sh"), "start")
	start.Env = l.clusterEnv
	start.Stdout, start.Stderr = os.Stderr, os.Stderr
	if err := start.Run(); err != nil {
		return fmt.Errorf("hack/cluster.sh start (lab API server on :%s): %w", apiPort, err)
	}
	envCmd := exec.Command(filepath.Join(E.Root, "hack", "cluster.sh"), "env")
	envCmd.Env = l.clusterEnv
	out, err := envCmd.Output()
	if err != nil {
		return fmt.Errorf("hack/cluster.sh env: %w", err)
	}
	l.kubeconfig = parseExports(string(out))["KUBECONFIG"]
	if l.kubeconfig == "" {
		return fmt.Errorf("hack/cluster.sh env printed no KUBECONFIG:\n%s", out)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", l.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 200, 400
	if l.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	if l.dir, err = os.MkdirTemp("", "drift-flux-lab-"); err != nil {
		return err
	}

	kubectl := func(stdin []byte, args ...string) error {
		cmd := exec.Command(filepath.Join(E.KubeBinDir, "kubectl"), append([]string{"--kubeconfig", l.kubeconfig}, args...)...)
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, b)
		}
		return nil
	}
	if err := kubectl(nil, "apply", "--server-side", "--force-conflicts", "--field-manager=drift-e2e-lab", "-f", bins["flux-crds"]); err != nil {
		return err
	}
	if err := kubectl([]byte(labCRD+"---\n"+`apiVersion: v1
kind: Namespace
metadata: {name: flux-system}
`), "apply", "--server-side", "--field-manager=drift-e2e-lab", "-f", "-"); err != nil {
		return err
	}
	if err := kubectl(nil, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/kustomizations.kustomize.toolkit.fluxcd.io", "crd/helmreleases.helm.toolkit.fluxcd.io",
		"crd/gitrepositories.source.toolkit.fluxcd.io", "crd/helmcharts.source.toolkit.fluxcd.io",
		"crd/ocirepositories.source.toolkit.fluxcd.io", "crd/widgets.lab.drift.test"); err != nil {
		return err
	}

	l.srv = httptest.NewServer(l.files)

	// Flags as DESIGN.md "Real Flux controllers": no leader election, no
	// metrics port, health on an ephemeral port, no remote bases. Neither
	// controller has a --kubeconfig flag (v1.9.6 refuses it):
	// controller-runtime reads KUBECONFIG from the environment.
	if err := l.run("kustomize-controller", bins["kustomize-controller"],
		"--metrics-addr=0", "--health-addr=127.0.0.1:0", "--enable-leader-election=false",
		"--no-remote-bases=true", "--concurrent=8"); err != nil {
		return err
	}
	return nil
}

// helm starts helm-controller on first use (building it if needed), so
// that runs without HelmRelease scenarios do not wait for its build.
func (l *fluxLab) helm(t testing.TB) {
	t.Helper()
	l.helmOnce.Do(func() {
		bins, err := buildTools("helm-controller")
		if err != nil {
			l.helmErr = err
			return
		}
		// helm-controller has no --kubeconfig flag: KUBECONFIG is read
		// from the environment by controller-runtime.
		l.helmErr = l.run("helm-controller", bins[0],
			"--metrics-addr=0", "--health-addr=127.0.0.1:0", "--enable-leader-election=false", "--concurrent=8")
	})
	if l.helmErr != nil {
		t.Fatalf("flux lab: %v", l.helmErr)
	}
}

// run starts one controller as a child process, logging to the lab dir.
func (l *fluxLab) run(name, bin string, args ...string) error {
	logPath := filepath.Join(l.dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "RUNTIME_NAMESPACE=flux-system", "KUBECONFIG="+l.kubeconfig)
	cmd.Stdout, cmd.Stderr = f, f
	dieWithTests(cmd)
	// The child writes its log through its own descriptor; closing ours has
	// nothing to flush, so its error is dropped.
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	l.procMu.Lock()
	l.procs = append(l.procs, cmd)
	l.logs[name] = logPath
	l.procMu.Unlock()
	go func() { _ = cmd.Wait(); _ = f.Close() }()
	return nil
}

// stopFluxLab stops what the lab started (TestMain calls it after m.Run):
// the controllers, the artifact server, and the lab API server and etcd.
func stopFluxLab() {
	l := labStarted
	if l == nil {
		return
	}
	l.procMu.Lock()
	defer l.procMu.Unlock()
	for _, p := range l.procs {
		if p.Process != nil {
			_ = p.Process.Kill()
		}
	}
	if l.srv != nil {
		l.srv.Close()
	}
	theWebhook.close()
	if l.clusterEnv != nil {
		stop := exec.Command(filepath.Join(E.Root, "hack", "cluster.sh"), "stop")
		stop.Env = l.clusterEnv
		stop.Stdout, stop.Stderr = os.Stderr, os.Stderr
		_ = stop.Run()
	}
	if l.dir != "" && os.Getenv("DRIFT_E2E_KEEP") == "" {
		_ = os.RemoveAll(l.dir)
	}
}

// labCRD is a small CRD for the CRD-backed scenarios.
const labCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.lab.drift.test}
spec:
  group: lab.drift.test
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
              tags:
                type: array
                items: {type: string}
`

// logTails returns the last lines of every controller log.
func (l *fluxLab) logTails() string {
	l.procMu.Lock()
	defer l.procMu.Unlock()
	var b strings.Builder
	for name, p := range l.logs {
		data, _ := os.ReadFile(p)
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		fmt.Fprintf(&b, "--- %s (%s), last lines:\n%s\n", name, p, strings.Join(lines, "\n"))
	}
	return b.String()
}

// kubectl runs our kubectl against the lab API server and fails the test
// unless it exits 0.
func (l *fluxLab) kubectl(t testing.TB, opts RunOpts, args ...string) string {
	t.Helper()
	opts.Kubeconfig = l.kubeconfig
	return E.KubectlWith(t, opts, args...)
}

// drift runs kubectl-drift against the lab API server.
func (l *fluxLab) drift(t testing.TB, args ...string) Result {
	t.Helper()
	return E.Run(t, RunOpts{Kubeconfig: l.kubeconfig}, KubectlDrift, args...)
}

// namespace creates a fresh namespace on the lab API server.
func (l *fluxLab) namespace(t testing.TB, name string) string {
	t.Helper()
	ns := uniqueName("fx-", name, 62)
	l.kubectl(t, RunOpts{}, "create", "namespace", ns)
	return ns
}

// serve publishes data at a fresh path and returns its URL and sha256.
func (l *fluxLab) serve(name string, data []byte) (url, digest string) {
	sum := sha256.Sum256(data)
	digest = hex.EncodeToString(sum[:])
	path := "/" + digest[:16] + "/" + name
	l.files.mu.Lock()
	l.files.m[path] = data
	l.files.mu.Unlock()
	return l.srv.URL + path, digest
}

// tarGz packs files (path -> content) below prefix into a tar.gz.
func tarGz(t testing.TB, prefix string, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		body := []byte(files[n])
		if err := tw.WriteHeader(&tar.Header{Name: filepath.Join(prefix, n), Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (l *fluxLab) create(t testing.TB, gvr schema.GroupVersionResource, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("bad manifest: %v\n%s", err, manifest)
	}
	out, err := l.dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{FieldManager: "drift-e2e-lab"})
	if err != nil {
		t.Fatalf("create %s %s/%s: %v", gvr.Resource, u.GetNamespace(), u.GetName(), err)
	}
	return out
}

// patchStatus merge-patches the status subresource, as source-controller
// would write it.
func (l *fluxLab) patchStatus(t testing.TB, gvr schema.GroupVersionResource, ns, name string, status map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"status": status})
	if _, err := l.dyn.Resource(gvr).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, b,
		metav1.PatchOptions{FieldManager: "source-controller"}, "status"); err != nil {
		t.Fatalf("patch status of %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

func readyCondition(gen int64, now string) []any {
	return []any{map[string]any{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "stored artifact",
		"lastTransitionTime": now, "observedGeneration": gen}}
}

// gitRepo creates GitRepository ns/repo whose artifact is a tar.gz of
// files, the way source-controller would publish it, and returns the
// artifact revision.
func (l *fluxLab) gitRepo(t testing.TB, ns string, files map[string]string) string {
	t.Helper()
	obj := l.create(t, gvrGitRepo, fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: repo, namespace: %s}
spec: {interval: 1h, url: "https://example.invalid/repo.git", ref: {branch: main}}
`, ns))
	return l.publish(t, ns, obj.GetGeneration(), files)
}

// publish makes files the GitRepository's new artifact (a new commit, as
// source-controller would announce it) and returns its revision.
func (l *fluxLab) publish(t testing.TB, ns string, gen int64, files map[string]string) string {
	t.Helper()
	data := tarGz(t, "", files)
	url, digest := l.serve("repo.tar.gz", data)
	h := sha1.Sum(data)
	rev := "main@sha1:" + hex.EncodeToString(h[:])
	obj := &unstructured.Unstructured{}
	obj.SetGeneration(gen)
	now := time.Now().UTC().Format(time.RFC3339)
	l.patchStatus(t, gvrGitRepo, ns, "repo", map[string]any{
		"observedGeneration": obj.GetGeneration(),
		"artifact": map[string]any{"path": "gitrepository/" + ns + "/repo/" + digest[:12] + ".tar.gz", "url": url,
			"revision": rev, "digest": "sha256:" + digest, "lastUpdateTime": now, "size": len(data)},
		"conditions": readyCondition(obj.GetGeneration(), now),
	})
	return rev
}

// helmChart creates HelmChart ns/name whose artifact is the packaged chart
// (templates: file name -> YAML) and returns the chart version.
func (l *fluxLab) helmChart(t testing.TB, ns, name string, templates map[string]string) string {
	t.Helper()
	files := map[string]string{}
	for n, c := range templates {
		files["templates/"+n] = c
	}
	return l.helmChartFiles(t, ns, name, files)
}

// helmChartFiles creates HelmChart ns/name whose artifact is the packaged
// chart of files (path in the chart -> content; Chart.yaml is written
// here) and returns the chart version.
func (l *fluxLab) helmChartFiles(t testing.TB, ns, name string, chart map[string]string) string {
	t.Helper()
	const version = "0.1.0"
	files := map[string]string{"Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", name, version)}
	for n, c := range chart {
		files[n] = c
	}
	data := tarGz(t, name, files)
	url, digest := l.serve(name+"-"+version+".tgz", data)
	obj := l.create(t, gvrHelmChart, fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: %s, namespace: %s}
spec: {chart: %s, interval: 1h, sourceRef: {kind: HelmRepository, name: repo}}
`, name, ns, name))
	now := time.Now().UTC().Format(time.RFC3339)
	l.patchStatus(t, gvrHelmChart, ns, name, map[string]any{
		"observedGeneration": obj.GetGeneration(),
		"artifact": map[string]any{"path": "helmchart/" + ns + "/" + name + "/" + name + "-" + version + ".tgz", "url": url,
			"revision": version, "digest": "sha256:" + digest, "lastUpdateTime": now, "size": len(data)},
		"conditions": readyCondition(obj.GetGeneration(), now),
	})
	return version
}

// waitFor polls get until done says so, or fails the test naming what it
// waited for, for how long, and the last status seen.
func (l *fluxLab) waitFor(t testing.TB, what string, gvr schema.GroupVersionResource, ns, name string, done func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	start := time.Now()
	var last *unstructured.Unstructured
	for time.Since(start) < labReconcileTimeout {
		obj, err := l.dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			last = obj
			if done(obj) {
				return obj
			}
		}
		time.Sleep(150 * time.Millisecond)
	}
	var st any
	if last != nil {
		st = last.Object["status"]
	}
	b, _ := json.Marshal(st)
	t.Fatalf("%s %s/%s: %s did not happen within %s (is the controller running?)\nlast status: %s\n%s",
		gvr.Resource, ns, name, what, time.Since(start).Round(time.Second), b, l.logTails())
	return nil
}

func condition(obj *unstructured.Unstructured, typ string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

// kustomization creates Kustomization ns/apps (path ./, prune, interval 1h
// so that only the test triggers reconciles) with extra spec YAML and
// waits for it to apply rev.
func (l *fluxLab) kustomization(t testing.TB, ns, rev, extraSpec string) {
	t.Helper()
	l.create(t, gvrKS, labKustomization(ns, extraSpec))
	l.waitApplied(t, ns, rev)
}

// labKustomization is the manifest of the lab's Kustomization ns/apps.
func labKustomization(ns, extraSpec string) string {
	return fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: %s}
spec:
  interval: 1h
  path: ./
  prune: true
  timeout: 30s
  sourceRef: {kind: GitRepository, name: repo}
%s`, ns, indent(extraSpec, "  "))
}

// waitApplied waits until Kustomization ns/apps has applied rev.
func (l *fluxLab) waitApplied(t testing.TB, ns, rev string) {
	t.Helper()
	l.waitFor(t, "apply of "+rev, gvrKS, ns, "apps", func(o *unstructured.Unstructured) bool {
		r, _, _ := unstructured.NestedString(o.Object, "status", "lastAppliedRevision")
		s, _, _ := condition(o, "Ready")
		return r == rev && s == "True"
	})
}

// helmRelease creates HelmRelease ns/name on HelmChart ns/name with extra
// spec YAML (no waits: nothing becomes ready without
// kube-controller-manager) and waits for the install.
func (l *fluxLab) helmRelease(t testing.TB, ns, name, extraSpec string) {
	t.Helper()
	l.create(t, gvrHR, fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: %s, namespace: %s}
spec:
  interval: 1h
  chartRef: {kind: HelmChart, name: %s}
  install: {disableWait: true}
  upgrade: {disableWait: true}
%s`, name, ns, name, indent(extraSpec, "  ")))
	l.waitFor(t, "install", gvrHR, ns, name, func(o *unstructured.Unstructured) bool {
		s, _, _ := condition(o, "Ready")
		g, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
		return s == "True" && g == o.GetGeneration()
	})
}

// reconcile forces one reconcile of a Kustomization or HelmRelease (the
// `reconcile.fluxcd.io/requestedAt` annotation, as `flux reconcile` does)
// and waits until the controller reports it handled that request.
func (l *fluxLab) reconcile(t testing.TB, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	token := time.Now().UTC().Format(time.RFC3339Nano)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"reconcile.fluxcd.io/requestedAt": token}}})
	if _, err := l.dyn.Resource(gvr).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "flux-client-side-apply"}); err != nil {
		t.Fatalf("request reconcile of %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	l.waitFor(t, "reconcile "+token, gvr, ns, name, func(o *unstructured.Unstructured) bool {
		got, _, _ := unstructured.NestedString(o.Object, "status", "lastHandledReconcileAt")
		return got == token
	})
	if gvr == gvrHR {
		// helm-controller's status patch after a drift correction conflicts
		// once and is retried about a second later (DESIGN.md): the
		// objects are already corrected, give the retry time to land.
		time.Sleep(1500 * time.Millisecond)
	}
}

// getJSON returns the live object as a generic map.
func (l *fluxLab) getJSON(t testing.TB, gvr schema.GroupVersionResource, ns, name string) map[string]any {
	t.Helper()
	obj, err := l.dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return obj.Object
}

func indent(s, pre string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = pre + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}
