//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer collects a process's stderr while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs `kubectl drift serve` as the read-only user (get, list,
// watch) and waits for /readyz. It is stopped with SIGTERM at cleanup and
// must exit 0.
func startServe(t *testing.T, kubeconfig string, args ...string) (addr string, log *syncBuffer, cmd *exec.Cmd) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	cmd = exec.Command(filepath.Join(E.BinDir, KubectlDrift), append([]string{"serve", "--metrics-bind-address", addr}, args...)...)
	cmd.Env = append(E.baseEnv(kubeconfig), "KUBECONFIG="+kubeconfig)
	log = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	dieWithTests(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve did not exit 0 on SIGINT: %v\n%s", err, log.String())
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("serve did not stop within 15s of SIGINT\n%s", log.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				return addr, log, cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready within 60s:\n%s", log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startPrometheus runs Debian's Prometheus on loopback, scraping target
// every second, with a config and TSDB in a temporary directory.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus not installed: run hack/install-deps.sh")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: kubectl-drift
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	dieWithTests(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	// The port opens before the TSDB is loaded (queries answer 503 until
	// then): wait for /-/ready.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready within 30s: %v\n%s", err, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return "http://" + addr
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
}

// promQuery runs an instant query over Prometheus's HTTP API; the query
// must be accepted (status success).
func promQuery(t *testing.T, base, q string) []promSample {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %q: status %q error %q (%v)\n%s", q, r.Status, r.Error, err, b)
	}
	var out []promSample
	if r.Data.ResultType == "vector" {
		if err := json.Unmarshal(r.Data.Result, &out); err != nil {
			t.Fatalf("query %q: %v", q, err)
		}
	}
	return out
}

// waitProm polls q until ok accepts its result.
func waitProm(t *testing.T, base, q string, timeout time.Duration, ok func([]promSample) bool) []promSample {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		res := promQuery(t, base, q)
		if ok(res) {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, %q gave %+v", timeout, q, res)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// serveMetrics is serve's /metrics page; the test fails when serve does not
// answer (it was ready: it died).
func serveMetrics(t *testing.T, addr string, log *syncBuffer) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("serve died? %v\n%s", err, log.String())
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// waitServeMetrics polls serve's /metrics until ok accepts the page, for
// 30 s at most.
func waitServeMetrics(t *testing.T, addr string, log *syncBuffer, what string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := serveMetrics(t, addr, log)
		if ok(m) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen within 30s\nmetrics:\n%s\nserve:\n%s", what, m, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestServeFightOverPrometheus: serve (as the read-only user) watches a
// namespace where kustomize-controller's field manager and a script fight
// over a Deployment's replicas, and a person's one-off edit of a ConfigMap
// is reverted once. A real Prometheus scrapes serve; over its HTTP API the
// fight is reported with the engine and the other manager within one
// resync, the one-off edit is not a fight, reverts are counted, scan's
// metric names are there, and every dashboard query is accepted.
func TestServeFightOverPrometheus(t *testing.T) {
	f := newFluxFight(t, "serve")
	ns := f.ns

	const resync = 20 * time.Second
	addr, serveLog, _ := startServe(t, E.ReaderKubeconfig, "-n", ns, "--resync", resync.String())
	prom := startPrometheus(t, addr)
	waitProm(t, prom, `up{job="kubectl-drift"}`, 30*time.Second, func(r []promSample) bool { return len(r) == 1 && r[0].Value[1] == "1" })

	// The one-off edit, reverted once by the engine: two flips.
	f.apply(t, "kubectl-edit", fluxSettingsEdit(ns, "debug"))
	time.Sleep(1500 * time.Millisecond)
	f.apply(t, "kustomize-controller", fluxSettings(ns, "info"))

	// The fight: a script scales to 5, the engine puts 3 back, three
	// rounds (six flips), bounded in count and time.
	start := time.Now()
	for i := 0; i < 3; i++ {
		f.apply(t, "hpa-script", f.scale(5))
		time.Sleep(1200 * time.Millisecond)
		f.apply(t, "kustomize-controller", f.web(3))
		time.Sleep(1200 * time.Millisecond)
	}
	fights := waitProm(t, prom, fmt.Sprintf(`kubectl_drift_fights{namespace=%q}`, ns), resync, func(r []promSample) bool { return len(r) > 0 })
	t.Logf("fight reported %s after the first write", time.Since(start).Round(time.Millisecond))
	if len(fights) != 1 {
		t.Fatalf("want exactly one fight (the one-off edit is none), got %+v", fights)
	}
	want := map[string]string{"namespace": ns, "kind": "Deployment.apps", "field": "/spec/replicas", "engine": "flux", "manager": "hpa-script"}
	for k, v := range want {
		if fights[0].Metric[k] != v {
			t.Errorf("fight label %s = %q, want %q (%v)", k, fights[0].Metric[k], v, fights[0].Metric)
		}
	}
	if _, has := fights[0].Metric["name"]; has {
		t.Errorf("object name in kubectl_drift_fights without --fight-names: %v", fights[0].Metric)
	}
	flips := promQuery(t, prom, fmt.Sprintf(`kubectl_drift_fight_flips{namespace=%q}`, ns))
	if len(flips) != 1 || flips[0].Value[1] != "6" {
		t.Errorf("flips = %+v, want 6 (seen engine→script, script→engine, three times)", flips)
	}
	// Both managers and both values, from serve's log.
	if l := serveLog.String(); !strings.Contains(l, "fight: Deployment.apps "+ns+"/web /spec/replicas: kustomize-controller writes 3, hpa-script writes 5") {
		t.Errorf("serve did not log the fight with both managers and values:\n%s", l)
	}
	if strings.Contains(serveLog.String(), "ConfigMap "+ns+"/settings") {
		t.Errorf("the one-off edit was reported as a fight:\n%s", serveLog.String())
	}
	// Reverts: three of the Deployment, one of the ConfigMap.
	waitProm(t, prom, fmt.Sprintf(`sum by (kind, manager) (kubectl_drift_reverts_total{namespace=%q})`, ns), 10*time.Second, func(r []promSample) bool {
		got := map[string]string{}
		for _, s := range r {
			got[s.Metric["kind"]+" "+s.Metric["manager"]] = fmt.Sprint(s.Value[1])
		}
		return got["Deployment.apps hpa-script"] == "3" && got["ConfigMap kubectl-edit"] == "1" && len(got) == 2
	})
	// scan's metrics, same names: the reverted objects are clean now.
	if r := promQuery(t, prom, `kubectl_drift_scan_kinds{result="listed"}`); len(r) != 1 || r[0].Value[1] == "0" {
		t.Errorf("kubectl_drift_scan_kinds: %+v", r)
	}
	if r := promQuery(t, prom, fmt.Sprintf(`kubectl_drift_objects{namespace=%q}`, ns)); len(r) != 0 {
		t.Errorf("reverted objects still counted as drifted: %+v", r)
	}
	// Drift that stays is counted with scan's labels.
	f.apply(t, "hpa-script", f.scale(7))
	waitProm(t, prom, fmt.Sprintf(`kubectl_drift_fields{namespace=%q,kind="Deployment.apps",manager="hpa-script",engine="flux"}`, ns), 10*time.Second,
		func(r []promSample) bool { return len(r) == 1 })

	// Every panel of the shipped dashboard is a query Prometheus accepts.
	b, err := os.ReadFile(filepath.Join(E.Root, "deploy", "grafana", "kubectl-drift.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			promQuery(t, prom, tg.Expr)
		}
	}
	if len(dash.Panels) == 0 {
		t.Fatal("dashboard has no panels")
	}
}

// Ports of the private API server of TestServeSurvivesAPIServerRestart:
// not the shared cluster's (16443/12379), the Flux lab's (16453/12391),
// the Argo CD harness's (16463/12401) or the fleet spokes' (16473/12411,
// 16483/12421; e2e/fleet_test.go), which stay up for the whole test binary.
const (
	restartAPIServerPort = "16493"
	restartEtcdPort      = "12431"
)

// privateCluster is a control plane of a test's own: hack/cluster.sh with
// its own directory (under the tools cache) and ports, so the shared
// cluster is not disturbed; stopped at cleanup.
type privateCluster struct {
	t             *testing.T
	env           []string
	port          string
	dir           string // its run directory (pid files, logs)
	admin, reader string // kubeconfigs
}

func startPrivateCluster(t *testing.T, dir, port, etcdPort string) *privateCluster {
	t.Helper()
	pc := &privateCluster{t: t, port: port, dir: filepath.Join(toolCacheDir(), dir)}
	pc.env = append(os.Environ(), "DRIFT_CLUSTER_DIR="+pc.dir, "DRIFT_APISERVER_PORT="+port, "DRIFT_ETCD_PORT="+etcdPort)
	pc.run("start")
	t.Cleanup(func() { pc.run("stop") })
	cenv := parseExports(string(pc.run("env")))
	pc.admin, pc.reader = cenv["KUBECONFIG"], cenv["DRIFT_READER_KUBECONFIG"]
	return pc
}

// run runs hack/cluster.sh ARG for this control plane.
func (pc *privateCluster) run(arg string) []byte {
	pc.t.Helper()
	cmd := exec.Command(filepath.Join(E.Root, "hack", "cluster.sh"), arg)
	cmd.Env = pc.env
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		pc.t.Fatalf("hack/cluster.sh %s (private API server on :%s): %v", arg, pc.port, err)
	}
	return out
}

// kubectl runs kubectl as this control plane's admin, stdin as given.
func (pc *privateCluster) kubectl(stdin string, args ...string) {
	pc.t.Helper()
	res := E.Run(pc.t, RunOpts{Kubeconfig: pc.admin, Stdin: []byte(stdin)}, filepath.Join(E.KubeBinDir, "kubectl"), args...)
	if res.Code != 0 {
		pc.t.Fatalf("kubectl %s: %s", strings.Join(args, " "), res.Stderr)
	}
}

// waitEstablished waits until the CRD is Established on this control
// plane (Env.WaitEstablishedOn, which retries kubectl wait's "accessor
// error" before the API server writes a condition: it failed
// TestServeSettingsReload once in a cold CI run under load).
func (pc *privateCluster) waitEstablished(crd string) {
	pc.t.Helper()
	if err := E.WaitEstablishedOn(pc.t, pc.admin, crd); err != nil {
		pc.t.Fatal(err)
	}
}

// TestServeSurvivesAPIServerRestart runs serve against a private API server
// (hack/cluster.sh with its own directory and ports, so the shared cluster
// is not disturbed), kills the API server and starts it again with the same
// arguments over the same etcd: serve stays up and healthy, re-lists, and
// keeps the fight history it had: an edit and a revert before the restart
// plus one edit after it make the fight.
func TestServeSurvivesAPIServerRestart(t *testing.T) {
	pc := startPrivateCluster(t, "cluster-serve", restartAPIServerPort, restartEtcdPort)
	kubectl := pc.kubectl
	admin, reader := pc.admin, pc.reader
	crdDir, err := buildTools("flux-crds")
	if err != nil {
		t.Fatal(err)
	}
	kubectl("", "apply", "--server-side", "--field-manager=drift-e2e-serve", "-f", crdDir[0])
	pc.waitEstablished("crd/kustomizations.kustomize.toolkit.fluxcd.io")
	const ns = "serve-restart"
	kubectl("", "create", "namespace", ns)
	kubectl(fluxKustomization(ns, ""), "apply", "--server-side", "--field-manager=drift-e2e-serve", "-f", "-")
	cm := func(manager, level string) {
		t.Helper()
		doc := fluxSettingsEdit(ns, level)
		if manager == "kustomize-controller" {
			doc = fluxSettings(ns, level)
		}
		kubectl(doc, "apply", "--server-side", "--force-conflicts", "--field-manager="+manager, "-f", "-")
	}
	cm("kustomize-controller", "info")

	addr, serveLog, serveCmd := startServe(t, reader, "-n", ns, "--resync", "1m")
	metrics := func() string { t.Helper(); return serveMetrics(t, addr, serveLog) }
	waitMetric := func(what string, ok func(string) bool) {
		t.Helper()
		waitServeMetrics(t, addr, serveLog, what, ok)
	}
	reverts := `kubectl_drift_reverts_total{engine="flux",kind="ConfigMap",manager="kubectl-edit",namespace="serve-restart"} 1`
	cm("kubectl-edit", "debug")
	waitMetric("drift", func(m string) bool {
		return strings.Contains(m, `kubectl_drift_objects{engine="flux",kind="ConfigMap",namespace="serve-restart"} 1`)
	})
	cm("kustomize-controller", "info")
	waitMetric("revert", func(m string) bool { return strings.Contains(m, reverts) })

	// Restart the API server: same arguments, same etcd.
	pidFile := filepath.Join(pc.dir, "apiserver.pid")
	pidB, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(pidB))
	argv, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimRight(string(argv), "\x00"), "\x00")
	if err := exec.Command("kill", pid).Run(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && exec.Command("kill", "-0", pid).Run() == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // serve's watches fail and retry meanwhile
	if resp, err := http.Get("http://" + addr + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("serve not healthy while the API server is down: %v\n%s", err, serveLog.String())
	}
	if serveCmd.ProcessState != nil {
		t.Fatalf("serve exited while the API server was down:\n%s", serveLog.String())
	}
	logf, err := os.OpenFile(filepath.Join(pc.dir, "apiserver.log"), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	restarted := exec.Command(args[0], args[1:]...)
	restarted.Stdout, restarted.Stderr = logf, logf
	if err := restarted.Start(); err != nil {
		t.Fatal(err)
	}
	_ = logf.Close()
	go func() { _ = restarted.Wait() }()
	// hack/cluster.sh stop finds the new process by its pid file.
	if err := os.WriteFile(pidFile, []byte(fmt.Sprint(restarted.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for E.Run(t, RunOpts{Kubeconfig: admin}, filepath.Join(E.KubeBinDir, "kubectl"), "get", "--raw", "/readyz").Code != 0 {
		if time.Now().After(deadline) {
			t.Fatal("restarted API server not ready within 60s")
		}
		time.Sleep(500 * time.Millisecond)
	}

	// The third flip, after the restart: the fight is reported, so the
	// history of the first two survived the re-list.
	cm("kubectl-edit", "debug")
	waitMetric("fight after restart", func(m string) bool {
		// client_golang sorts label pairs by name.
		return strings.Contains(m, `kubectl_drift_fights{engine="flux",field="/data/level",kind="ConfigMap",manager="kubectl-edit",namespace="serve-restart"} 1`)
	})
	if !strings.Contains(metrics(), reverts) {
		t.Errorf("reverts counter lost across the restart:\n%s", metrics())
	}
}

// TestServePersistedWithRealFlux: in the Flux lab (its own API server and
// the real kustomize-controller), a script adds a key to a ConfigMap that
// Git does not hold; Flux's apply leaves another manager's field alone, so
// the drift survives the reconcile the test forces, and serve counts it as
// persisted (kubectl_drift_persisted_fields) from the Kustomization's
// status.lastHandledReconcileAt, read from its owner informer.
func TestServePersistedWithRealFlux(t *testing.T) {
	l := lab(t)
	ns := l.namespace(t, "serve-persist")
	rev := l.gitRepo(t, ns, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {level: info}\n"})
	l.kustomization(t, ns, rev, "")
	addr, serveLog, _ := startServe(t, l.kubeconfig, "-n", ns, "--resync", "1m")
	metrics := func() string { t.Helper(); return serveMetrics(t, addr, serveLog) }
	waitMetric := func(what, line string) {
		t.Helper()
		waitServeMetrics(t, addr, serveLog, what+": "+line, func(m string) bool { return strings.Contains(m, line) })
	}
	l.kubectl(t, RunOpts{Stdin: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {extra: \"x\"}\n")},
		"apply", "--server-side", "--field-manager=hpa-script", "-f", "-")
	waitMetric("drift", `kubectl_drift_objects{engine="flux",kind="ConfigMap",namespace="`+ns+`"} 1`)
	if strings.Contains(metrics(), "kubectl_drift_persisted_fields{") {
		t.Fatalf("persisted before any reconcile:\n%s", metrics())
	}
	time.Sleep(1100 * time.Millisecond) // managedFields times are whole seconds
	l.reconcile(t, gvrKS, ns, "apps")
	waitMetric("persisted", `kubectl_drift_persisted_fields{engine="flux",kind="ConfigMap",manager="hpa-script",namespace="`+ns+`"} 1`)
	// The drift really survived: the key is still there.
	if out := l.kubectl(t, RunOpts{}, "get", "configmap", "settings", "-n", ns, "-o", "jsonpath={.data.extra}"); out != "x" {
		t.Errorf("data.extra after the reconcile = %q: kustomize-controller removed it, nothing persisted", out)
	}
}

// TestScanWatchFight: `scan --watch -o json` reports a real fight, from the
// same detector as serve, fed by the watch's events: a script scales a
// Flux-owned Deployment and the engine's manager (kustomize-controller's
// forced server-side apply) puts Git's replicas back, twice; the event names
// both managers and values. A one-off edit reverted once is no fight.
func TestScanWatchFight(t *testing.T) {
	f := newFluxFight(t, "watchfight")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	w := startJSONWatch(t, ctx, E.ReaderKubeconfig, "scan", "-n", f.ns, "--watch", "-o", "json", "--watch-timeout", "80s")
	next := func(want func(map[string]any) bool, what string) map[string]any {
		t.Helper()
		return w.next(t, want, what)
	}
	is := func(typ, kind string) func(map[string]any) bool {
		return func(ev map[string]any) bool {
			r, _ := ev["resource"].(map[string]any)
			return ev["type"] == typ && r["kind"] == kind
		}
	}
	// managedFields times have one-second resolution: each write a second
	// after the previous one, so the watch sees each as its own.
	time.Sleep(1100 * time.Millisecond)
	// The one-off edit, reverted once.
	f.apply(t, "kubectl-edit", fluxSettingsEdit(f.ns, "debug"))
	next(is("drifted", "ConfigMap"), "the one-off edit")
	time.Sleep(1100 * time.Millisecond)
	f.apply(t, "kustomize-controller", fluxSettings(f.ns, "info"))
	next(is("reverted", "ConfigMap"), "the revert of the one-off edit")
	// The fight: script, engine, script (with the engine's first apply:
	// engine→script→engine→script, three flips, the default threshold).
	for i, step := range []struct {
		doc, manager, typ, waitFor string
	}{
		{f.scale(5), "hpa-script", "drifted", "the script's first scale"},
		{f.web(3), "kustomize-controller", "reverted", "the engine's revert"},
		{f.scale(5), "hpa-script", "drifted", "the script's second scale"},
	} {
		time.Sleep(1100 * time.Millisecond)
		f.apply(t, step.manager, step.doc)
		next(is(step.typ, "Deployment"), fmt.Sprintf("step %d: %s", i, step.waitFor))
	}
	ev := next(is("fight", "Deployment"), "the fight")
	fight, _ := ev["fight"].(map[string]any)
	got := fmt.Sprintf("%v %v=%v %v=%v flips=%v", ev["path"], fight["engineManager"], fight["engineValue"], fight["manager"], fight["value"], fight["flips"])
	if want := "/spec/replicas kustomize-controller=3 hpa-script=5 flips=3"; got != want {
		t.Errorf("fight event\n got %s\nwant %s\n(%v)", got, want, ev)
	}
	for _, e := range w.seen {
		if is("fight", "ConfigMap")(e) {
			t.Errorf("the one-off edit was reported as a fight: %v", e)
		}
	}
}

// Ports of TestServeSettingsReload's private API server (the bench scripts
// use 16503/12441 and 16513/12451).
const (
	settingsAPIServerPort = "16523"
	settingsEtcdPort      = "12461"
)

// TestServeSettingsReload: serve picks up a change to argocd-cm without a
// restart. On a private API server (its own argocd namespace, so the
// shared cluster's argocd-cm is never touched), a ConfigMap tracked by a
// real Application and applied as argocd-controller is drifted by
// kubectl-edit; serve counts it; an ignoreDifferences rule added to
// argocd-cm makes serve re-judge it as ignored (no drift, one reload);
// removing the rule brings the drift back.
func TestServeSettingsReload(t *testing.T) {
	pc := startPrivateCluster(t, "cluster-serve-settings", settingsAPIServerPort, settingsEtcdPort)
	kubectl, reader := pc.kubectl, pc.reader
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/argoproj/argo-cd/v3@v3.2.12").Output()
	if err != nil {
		t.Fatalf("go mod download argo-cd: %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download argo-cd: no Dir in %s", out)
	}
	kubectl("", "apply", "--server-side", "--field-manager=drift-e2e", "-f", filepath.Join(mod.Dir, "manifests", "crds", "application-crd.yaml"))
	pc.waitEstablished("crd/applications.argoproj.io")
	kubectl("", "create", "namespace", "argocd")
	kubectl("", "create", "namespace", "shop")
	argocdCM := func(extra string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata:\n  application.resourceTrackingMethod: annotation\n" + extra
	}
	kubectl(argocdCM(""), "apply", "--server-side", "--field-manager=drift-e2e", "-f", "-")
	kubectl(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: shop}
  source: {repoURL: "https://example.invalid/shop.git", path: shop}
  syncPolicy: {automated: {selfHeal: true}}
`, "apply", "--server-side", "--field-manager=drift-e2e", "-f", "-")
	// What Argo CD applies (server-side apply as argocd-controller), then
	// a person's edit.
	kubectl(`apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
  annotations: {argocd.argoproj.io/tracking-id: "shop:/ConfigMap:shop/settings"}
data: {level: info}
`, "apply", "--server-side", "--field-manager=argocd-controller", "-f", "-")
	kubectl("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: debug}\n",
		"apply", "--server-side", "--force-conflicts", "--field-manager=kubectl-edit", "-f", "-")

	addr, serveLog, _ := startServe(t, reader, "-n", "shop")
	const drifted = `kubectl_drift_objects{engine="argocd",kind="ConfigMap",namespace="shop"} 1`
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		waitServeMetrics(t, addr, serveLog, what, ok)
	}
	waitFor("the edit counted as drift", func(m string) bool { return strings.Contains(m, drifted) })
	kubectl(argocdCM("  resource.customizations.ignoreDifferences.ConfigMap: |\n    jsonPointers:\n    - /data/level\n"),
		"apply", "--server-side", "--field-manager=drift-e2e", "-f", "-")
	waitFor("the new rule ignores the edit", func(m string) bool {
		return strings.Contains(m, "kubectl_drift_serve_reloads_total 1") && !strings.Contains(m, "kubectl_drift_objects{")
	})
	kubectl(argocdCM(""), "apply", "--server-side", "--field-manager=drift-e2e", "-f", "-")
	waitFor("drift again without the rule", func(m string) bool {
		return strings.Contains(m, "kubectl_drift_serve_reloads_total 2") && strings.Contains(m, drifted)
	})
}
