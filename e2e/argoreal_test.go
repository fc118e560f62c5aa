//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A real Argo CD for the conformance suite: the multi-call argocd v3.2.11
// binary (hack/build-tools.sh argocd) run as repo-server, application
// controller and API server, Debian's redis-server, a git repository served
// as file://, all on loopback, against a dedicated kube-apiserver + etcd
// (hack/cluster.sh with its own directory and ports) so the real controller
// never acts on the Applications other e2e tests create as plain objects on
// the shared cluster. Started lazily once per test binary; TestMain's
// cleanup stops every process it started (stopArgoCD).

// ArgoCDVersion is the Argo CD the suite runs (the CLI's version; v3.2.12's
// cmd does not compile, see hack/build-tools.sh).
const ArgoCDVersion = "v3.2.11"

// The dedicated API server's default ports (hack/cluster.sh honours
// them); distinct from the shared cluster's 16443/12379.
// DRIFT_E2E_ARGOCD_PORTS=APISERVER/ETCD moves it (own run dir too), so
// that a second test binary (make differential ENGINE=argocd: 16543/12481)
// runs its own Argo CD beside the suites; Argo CD's own ports are free
// ones picked at start.
const (
	argoClusterPortDefault     = "16463"
	argoClusterEtcdPortDefault = "12401"
)

// argoClusterPorts returns the dedicated API server's port, its etcd's and
// its run dir name under the tool cache.
func argoClusterPorts() (apiserver, etcd, dir string, err error) {
	v := os.Getenv("DRIFT_E2E_ARGOCD_PORTS")
	if v == "" {
		return argoClusterPortDefault, argoClusterEtcdPortDefault, "cluster-argocd", nil
	}
	a, e, ok := strings.Cut(v, "/")
	if !ok || strings.Trim(a, "0123456789") != "" || strings.Trim(e, "0123456789") != "" || a == "" || e == "" {
		return "", "", "", fmt.Errorf("DRIFT_E2E_ARGOCD_PORTS=%q: want APISERVER/ETCD ports, e.g. 16543/12481", v)
	}
	return a, e, "cluster-argocd-" + a, nil
}

// ArgoCD is a running Argo CD and its cluster.
type ArgoCD struct {
	// Kubeconfig is the admin kubeconfig of the dedicated API server.
	Kubeconfig string
	// Server is the API server address, 127.0.0.1:PORT (plaintext, no auth).
	Server string
	// Namespace is the control-plane namespace.
	Namespace string
	// RepoDir is the git work tree Applications read, RepoURL its file:// URL.
	RepoDir, RepoURL string

	binary      string
	stateDir    string
	clusterVars []string
	redisPort   int
	repoPort    int
	env         []string

	mu    sync.Mutex // procs, git
	procs map[string]*exec.Cmd
}

var (
	argoOnce sync.Once
	argoInst *ArgoCD
	argoErr  error
)

// RealArgoCD starts Argo CD on first use and returns it; the test is
// skipped with the reason when DRIFT_E2E_NO_ARGOCD is set (outside CI: a
// skipped Argo CD suite never makes CI green, issue 30), and fails when
// Argo CD cannot start.
func RealArgoCD(t *testing.T) *ArgoCD {
	t.Helper()
	if os.Getenv("DRIFT_E2E_NO_ARGOCD") != "" {
		if os.Getenv("CI") != "" {
			t.Fatal("DRIFT_E2E_NO_ARGOCD is set under CI: CI judges the Argo CD verdicts with the real Argo CD")
		}
		t.Skip("DRIFT_E2E_NO_ARGOCD is set")
	}
	argoOnce.Do(func() {
		start := time.Now()
		argoInst, argoErr = startArgoCD()
		if argoErr == nil {
			port, _, _, _ := argoClusterPorts()
			fmt.Fprintf(os.Stderr, "e2e: Argo CD %s ready in %s (API 127.0.0.1:%s, argocd API %s)\n",
				ArgoCDVersion, time.Since(start).Round(100*time.Millisecond), port, argoInst.Server)
		}
	})
	if argoErr != nil {
		t.Fatalf("real Argo CD: %v", argoErr)
	}
	return argoInst
}

// stopArgoCD stops what RealArgoCD started (TestMain calls it on exit).
func stopArgoCD() {
	if argoInst == nil {
		return
	}
	argoInst.stop()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	// Only the port is wanted: the listener is closed to free it, and a
	// Close error leaves nothing to undo.
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePorts returns n distinct free ports: their listeners are all open
// until the last is chosen, so the kernel cannot hand one out twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		// Only the port is wanted; a Close error leaves nothing to undo.
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func startArgoCD() (*ArgoCD, error) {
	root := E.Root
	// The binary: built once into the user cache (waits for a build in
	// progress on the flock rather than starting a second one).
	bins, err := buildTools("argocd")
	if err != nil {
		return nil, err
	}
	bin := bins[0]
	// The repo-server execs kustomize and helm: the versions Argo CD
	// ships (hack/build-tools.sh), first on its PATH.
	tools, err := buildTools("argocd-kustomize", "argocd-helm")
	if err != nil {
		return nil, err
	}
	var toolDirs []string
	for _, p := range tools {
		toolDirs = append(toolDirs, filepath.Dir(p))
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("redis-server not found (run hack/install-deps.sh): %w", err)
	}
	state, err := os.MkdirTemp("", "drift-e2e-argocd-")
	if err != nil {
		return nil, err
	}
	a := &ArgoCD{binary: bin, stateDir: state, Namespace: "argocd", procs: map[string]*exec.Cmd{}}
	ok := false
	defer func() {
		if !ok {
			a.stop()
		}
	}()

	// The dedicated API server.
	port, etcdPort, dir, err := argoClusterPorts()
	if err != nil {
		return nil, err
	}
	a.clusterVars = []string{
		"DRIFT_CLUSTER_DIR=" + filepath.Join(toolCacheDir(), dir),
		"DRIFT_APISERVER_PORT=" + port,
		"DRIFT_ETCD_PORT=" + etcdPort,
	}
	cs := exec.Command(filepath.Join(root, "hack", "cluster.sh"), "start")
	cs.Env = append(os.Environ(), a.clusterVars...)
	if b, err := cs.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("dedicated API server (hack/cluster.sh start): %w\n%s", err, b)
	}
	ce := exec.Command(filepath.Join(root, "hack", "cluster.sh"), "env")
	ce.Env = append(os.Environ(), a.clusterVars...)
	envOut, err := ce.Output()
	if err != nil {
		return nil, fmt.Errorf("hack/cluster.sh env: %w", err)
	}
	a.Kubeconfig = parseExports(string(envOut))["KUBECONFIG"]

	// Objects Argo CD needs before it starts.
	if err := a.bootstrap(); err != nil {
		return nil, err
	}

	// Git: a work tree Applications read as file://.
	a.RepoDir = filepath.Join(state, "repo")
	if err := os.MkdirAll(a.RepoDir, 0o755); err != nil {
		return nil, err
	}
	a.RepoURL = "file://" + a.RepoDir
	if err := a.git("init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(a.RepoDir, "README"), []byte("kubectl-drift e2e\n"), 0o644); err != nil {
		return nil, err
	}
	if err := a.git("add", "-A"); err != nil {
		return nil, err
	}
	if err := a.git("commit", "-q", "-m", "init"); err != nil {
		return nil, err
	}

	home := filepath.Join(state, "home")
	tmp := filepath.Join(state, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	a.env = []string{
		"HOME=" + home, "TMPDIR=" + tmp, "KUBECONFIG=" + a.Kubeconfig,
		"ARGOCD_FAKE_IN_CLUSTER=true", "ARGOCD_GPG_ENABLED=false",
		"ARGOCD_LOG_FORMAT=text", "PATH=" + strings.Join(append(toolDirs, os.Getenv("PATH")), string(os.PathListSeparator)),
	}

	ports, err := freePorts(7)
	if err != nil {
		return nil, err
	}
	a.redisPort, a.repoPort = ports[0], ports[1]
	redis := fmt.Sprintf("127.0.0.1:%d", a.redisPort)
	repo := fmt.Sprintf("127.0.0.1:%d", a.repoPort)
	a.Server = fmt.Sprintf("127.0.0.1:%d", ports[2])

	if err := a.spawn("redis", "redis-server", nil, "--bind", "127.0.0.1", "--port", fmt.Sprint(a.redisPort),
		"--save", "", "--appendonly", "no", "--dir", state); err != nil {
		return nil, err
	}
	if err := waitTCP(redis, 20*time.Second); err != nil {
		return nil, a.failed("redis", err)
	}
	if err := a.spawn("repo-server", a.binary, []string{"ARGOCD_BINARY_NAME=argocd-repo-server"},
		"--address", "127.0.0.1", "--port", fmt.Sprint(a.repoPort),
		"--metrics-address", "127.0.0.1", "--metrics-port", fmt.Sprint(ports[3]),
		"--redis", redis, "--disable-tls"); err != nil {
		return nil, err
	}
	if err := waitTCP(repo, 60*time.Second); err != nil {
		return nil, a.failed("repo-server", err)
	}
	if err := a.startController(ports[4]); err != nil {
		return nil, err
	}
	// A port freePorts handed out can be taken before the server binds it
	// (any outgoing connection draws from the same range): on "address
	// already in use" the server is started again on new ports.
	for attempt := 1; ; attempt++ {
		if err := a.spawn("server", a.binary, []string{"ARGOCD_BINARY_NAME=argocd-server"},
			"--kubeconfig", a.Kubeconfig, "--namespace", a.Namespace,
			"--redis", redis, "--repo-server", repo, "--repo-server-plaintext",
			"--insecure", "--disable-auth", "--address", "127.0.0.1", "--port", fmt.Sprint(ports[2]),
			"--metrics-address", "127.0.0.1", "--metrics-port", fmt.Sprint(ports[5]),
			"--dex-server", "http://127.0.0.1:1"); err != nil {
			return nil, err
		}
		bindFailed := func() bool { return strings.Contains(a.LogTail("server", 20), "address already in use") }
		err := a.waitHTTP("/api/version", 90*time.Second, bindFailed)
		if err == nil {
			break
		}
		if attempt == 3 || !bindFailed() {
			return nil, a.failed("server", err)
		}
		a.kill("server")
		fresh, perr := freePorts(2)
		if perr != nil {
			return nil, perr
		}
		ports[2], ports[5] = fresh[0], fresh[1]
		a.Server = fmt.Sprintf("127.0.0.1:%d", ports[2])
	}
	ok = true
	return a, nil
}

// startController (re)starts the application controller; its metrics bind
// 0.0.0.0, so it gets a free port too.
func (a *ArgoCD) startController(metricsPort int) error {
	return a.spawn("controller", a.binary, []string{"ARGOCD_BINARY_NAME=argocd-application-controller"},
		"--kubeconfig", a.Kubeconfig, "--namespace", a.Namespace,
		"--redis", fmt.Sprintf("127.0.0.1:%d", a.redisPort),
		"--repo-server", fmt.Sprintf("127.0.0.1:%d", a.repoPort), "--repo-server-plaintext",
		"--metrics-port", fmt.Sprint(metricsPort),
		// Tests need self-heal at once, not after 1, 6, 18, 54 s of backoff.
		"--self-heal-backoff-timeout-seconds", "0",
		"--status-processors", "4", "--operation-processors", "4")
}

// RestartController restarts the application controller (settings it only
// reads at start).
func (a *ArgoCD) RestartController(t *testing.T) {
	t.Helper()
	a.kill("controller")
	p, err := freePort()
	if err == nil {
		err = a.startController(p)
	}
	if err != nil {
		t.Fatalf("restart controller: %v", err)
	}
}

// spawn starts a process in its own process group with its log in the
// state dir.
func (a *ArgoCD) spawn(name, bin string, env []string, args ...string) error {
	logf, err := os.Create(filepath.Join(a.stateDir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = a.stateDir
	cmd.Env = append(append([]string{}, a.env...), env...)
	if name == "redis" {
		cmd.Env = os.Environ()
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig: a test binary killed by -timeout (no deferred cleanup)
	// takes its Argo CD with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// The child writes its log through its own descriptor; closing ours has
	// nothing to flush, so its error is dropped.
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); _ = logf.Close() }()
	a.mu.Lock()
	a.procs[name] = cmd
	a.mu.Unlock()
	return nil
}

// kill stops one process group: SIGTERM, then SIGKILL after 5 s.
func (a *ArgoCD) kill(name string) {
	a.mu.Lock()
	cmd := a.procs[name]
	delete(a.procs, name)
	a.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	pid := cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

func (a *ArgoCD) stop() {
	for _, n := range []string{"server", "controller", "repo-server", "redis"} {
		a.kill(n)
	}
	if len(a.clusterVars) > 0 {
		cs := exec.Command(filepath.Join(E.Root, "hack", "cluster.sh"), "stop")
		cs.Env = append(os.Environ(), a.clusterVars...)
		_ = cs.Run()
	}
	if os.Getenv("DRIFT_E2E_KEEP") != "" {
		fmt.Fprintf(os.Stderr, "e2e: keeping Argo CD state in %s (DRIFT_E2E_KEEP)\n", a.stateDir)
		return
	}
	_ = os.RemoveAll(a.stateDir)
}

// failed adds the tail of a component's log to err.
func (a *ArgoCD) failed(name string, err error) error {
	return fmt.Errorf("%s: %w\n%s", name, err, a.LogTail(name, 30))
}

// LogTail returns the last n lines of a component's log.
func (a *ArgoCD) LogTail(name string, n int) string {
	b, _ := os.ReadFile(filepath.Join(a.stateDir, name+".log"))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func waitTCP(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close() // a probe connection: it connected, that is the answer
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not listening after %s: %w", addr, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitHTTP polls Argo CD's API until path answers, or gives up early
// when failed says the server cannot come up.
func (a *ArgoCD) waitHTTP(path string, timeout time.Duration, failed func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := a.api(context.Background(), http.MethodGet, path, nil)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || failed() {
			return fmt.Errorf("GET %s not answering after %s: %w", path, timeout, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// api calls Argo CD's REST API (plaintext, auth disabled).
func (a *ArgoCD) api(ctx context.Context, method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+a.Server+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }() // read to the end below; Close only frees the connection
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return b, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}

// Kubectl runs kubectl v1.37.2 against the dedicated API server.
func (a *ArgoCD) Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	return E.KubectlWith(t, RunOpts{Kubeconfig: a.Kubeconfig}, args...)
}

// KubectlWith is Kubectl with extra options (KUBE_EDITOR, stdin).
func (a *ArgoCD) KubectlWith(t testing.TB, opts RunOpts, args ...string) string {
	t.Helper()
	opts.Kubeconfig = a.Kubeconfig
	return E.KubectlWith(t, opts, args...)
}

// Apply applies a manifest on the dedicated API server.
func (a *ArgoCD) Apply(t testing.TB, manifest string, flags ...string) {
	t.Helper()
	a.KubectlWith(t, RunOpts{Stdin: []byte(manifest)}, append([]string{"apply", "-f", "-"}, flags...)...)
}

func (a *ArgoCD) kubectlRaw(stdin string, args ...string) error {
	cmd := exec.Command(filepath.Join(E.KubeBinDir, "kubectl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+a.Kubeconfig)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// bootstrap installs Argo CD's CRDs (server-side: too big for the
// last-applied annotation), its namespace, ConfigMaps, Secret and the
// default AppProject (the controller does not create it).
func (a *ArgoCD) bootstrap() error {
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/argoproj/argo-cd/v3@"+ArgoCDVersion).Output()
	if err != nil {
		return fmt.Errorf("go mod download argo-cd %s: %w", ArgoCDVersion, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return fmt.Errorf("go mod download argo-cd: no Dir in %s", out)
	}
	for _, f := range []string{"application-crd.yaml", "applicationset-crd.yaml", "appproject-crd.yaml"} {
		if err := a.kubectlRaw("", "apply", "--server-side", "--force-conflicts", "--field-manager=argo-e2e",
			"-f", filepath.Join(mod.Dir, "manifests", "crds", f)); err != nil {
			return err
		}
	}
	// A CRD created a moment ago may have no status yet, which kubectl
	// wait reports as an error rather than waiting: retry.
	var werr error
	for i := 0; i < 60; i++ {
		if werr = a.kubectlRaw("", "wait", "--for=condition=Established", "--timeout=30s",
			"crd/applications.argoproj.io", "crd/appprojects.argoproj.io"); werr == nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if werr != nil {
		return werr
	}
	return a.kubectlRaw(fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: %[1]s, labels: {app.kubernetes.io/part-of: argocd}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm, namespace: %[1]s, labels: {app.kubernetes.io/part-of: argocd}}
data: {policy.default: role:admin}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cmd-params-cm, namespace: %[1]s, labels: {app.kubernetes.io/part-of: argocd}}
---
apiVersion: v1
kind: Secret
metadata: {name: argocd-secret, namespace: %[1]s, labels: {app.kubernetes.io/part-of: argocd}}
stringData: {server.secretkey: %[2]s}
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: default, namespace: %[1]s}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
  clusterResourceWhitelist: [{group: "*", kind: "*"}]
`, a.Namespace, randomHex(16)), "apply", "-f", "-")
}

// git runs git in the repository with a fixed identity.
func (a *ArgoCD) git(args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = a.RepoDir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com", "GIT_CONFIG_NOSYSTEM=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// Commit writes files (path relative to the repository -> content; an
// empty content deletes the file) and commits them.
func (a *ArgoCD) Commit(t testing.TB, msg string, files map[string]string) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	for p, content := range files {
		full := filepath.Join(a.RepoDir, p)
		if content == "" {
			_ = os.Remove(full)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.git("add", "-A"); err != nil {
		t.Fatal(err)
	}
	if err := a.git("commit", "-q", "--allow-empty", "-m", msg); err != nil {
		t.Fatal(err)
	}
}

// SetConfigMap replaces the data of one of Argo CD's ConfigMaps.
func (a *ArgoCD) SetConfigMap(t testing.TB, name string, data map[string]string) {
	t.Helper()
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": a.Namespace, "labels": map[string]any{"app.kubernetes.io/part-of": "argocd"}},
		"data":     data}
	b, _ := json.Marshal(cm)
	a.KubectlWith(t, RunOpts{Stdin: b}, "replace", "-f", "-")
}

// AppStatus is the part of an Application's status the suite reads.
type AppStatus struct {
	Sync struct {
		Status   string `json:"status"`
		Revision string `json:"revision"`
	} `json:"sync"`
	Conditions []struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"conditions"`
	OperationState *struct {
		Phase      string `json:"phase"`
		Message    string `json:"message"`
		FinishedAt string `json:"finishedAt"`
		// StartedAt tells one operation from the next.
		StartedAt string `json:"startedAt"`
		// RetryCount: attempts of this operation that failed and are
		// retried (an automated sync retries 5 times by default).
		RetryCount int64 `json:"retryCount"`
	} `json:"operationState"`
	ReconciledAt string `json:"reconciledAt"`
}

// App reads an Application through Argo CD's API.
func (a *ArgoCD) App(t testing.TB, name string, refresh string) AppStatus {
	t.Helper()
	path := "/api/v1/applications/" + name
	if refresh != "" {
		path += "?refresh=" + refresh
	}
	// With refresh, Argo CD's API server answers once the controller has
	// compared the Application again; on a loaded machine its queue can
	// hold that past the timeout (a CI run beside other suites: 90 s), so
	// a timed-out refresh is asked for once more before the test fails.
	var b []byte
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		b, err = a.api(ctx, http.MethodGet, path, nil)
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || refresh == "" {
			break
		}
		t.Logf("Application %s: refresh not answered in 90 s (attempt %d): %v", name, attempt, err)
	}
	if err != nil {
		t.Fatalf("Application %s: %v", name, err)
	}
	var app struct {
		Status AppStatus `json:"status"`
	}
	if err := json.Unmarshal(b, &app); err != nil {
		t.Fatalf("Application %s: %v", name, err)
	}
	return app.Status
}

// RefreshHard makes Argo CD re-read Git and re-compare now (the GET blocks
// until the refresh is done).
func (a *ArgoCD) RefreshHard(t testing.TB, name string) AppStatus {
	t.Helper()
	return a.App(t, name, "hard")
}

// ManagedResource is one item of GET .../managed-resources with its states
// decoded.
type ManagedResource struct {
	Group, Kind, Namespace, Name string
	Modified                     bool
	Target, NormalizedLive       map[string]any
	PredictedLive, Live          map[string]any
}

// ManagedResources reads Argo CD's own per-object diff of an Application.
func (a *ArgoCD) ManagedResources(t testing.TB, name string) []ManagedResource {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := a.api(ctx, http.MethodGet, "/api/v1/applications/"+name+"/managed-resources", nil)
	if err != nil {
		t.Fatalf("managed-resources of %s: %v", name, err)
	}
	var raw struct {
		Items []struct {
			Group               string `json:"group"`
			Kind                string `json:"kind"`
			Namespace           string `json:"namespace"`
			Name                string `json:"name"`
			Modified            bool   `json:"modified"`
			TargetState         string `json:"targetState"`
			LiveState           string `json:"liveState"`
			NormalizedLiveState string `json:"normalizedLiveState"`
			PredictedLiveState  string `json:"predictedLiveState"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("managed-resources of %s: %v\n%s", name, err, b)
	}
	dec := func(s string) map[string]any {
		if s == "" || s == "null" {
			return nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("managed-resources of %s: state: %v", name, err)
		}
		return m
	}
	var out []ManagedResource
	for _, it := range raw.Items {
		out = append(out, ManagedResource{Group: it.Group, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name,
			Modified: it.Modified, Target: dec(it.TargetState), Live: dec(it.LiveState),
			NormalizedLive: dec(it.NormalizedLiveState), PredictedLive: dec(it.PredictedLiveState)})
	}
	return out
}

// CreateApp creates an Application in the control-plane namespace from a
// spec (YAML, indented by two spaces under spec:), with an operation that
// syncs it once, as `argocd app sync` does; annotations may be empty.
func (a *ArgoCD) CreateApp(t testing.TB, name, annotations, spec string) {
	t.Helper()
	meta := fmt.Sprintf("metadata:\n  name: %s\n  namespace: %s\n", name, a.Namespace)
	if annotations != "" {
		meta += "  annotations:\n" + annotations
	}
	a.Apply(t, "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"+meta+"spec:\n"+spec+
		"operation:\n  initiatedBy: {username: e2e}\n  sync: {revision: HEAD}\n")
}

// WaitSynced waits until the Application is Synced with its last operation
// (if any) finished, and fails naming the app, the wait and the last status.
func (a *ArgoCD) WaitSynced(t testing.TB, name string, timeout time.Duration) AppStatus {
	t.Helper()
	return a.waitSync(t, name, "Synced", timeout)
}

// WaitOutOfSync waits until the Application is OutOfSync.
func (a *ArgoCD) WaitOutOfSync(t testing.TB, name string, timeout time.Duration) AppStatus {
	t.Helper()
	return a.waitSync(t, name, "OutOfSync", timeout)
}

func (a *ArgoCD) waitSync(t testing.TB, name, want string, timeout time.Duration) AppStatus {
	t.Helper()
	start := time.Now()
	var st AppStatus
	for {
		st = a.App(t, name, "")
		running := st.OperationState != nil && st.OperationState.Phase == "Running"
		if st.Sync.Status == want && !running {
			return st
		}
		if st.OperationState != nil && (st.OperationState.Phase == "Failed" || st.OperationState.Phase == "Error") && want == "Synced" {
			t.Fatalf("Application %s: sync %s: %s", name, st.OperationState.Phase, st.OperationState.Message)
		}
		if time.Since(start) > timeout {
			b, _ := json.Marshal(st)
			t.Fatalf("Application %s: not %s after %s; status %s\ncontroller log:\n%s", name, want, time.Since(start).Round(time.Second), b, a.LogTail("controller", 15))
		}
		time.Sleep(300 * time.Millisecond)
	}
}
