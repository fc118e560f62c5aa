//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// E is the environment TestMain prepares: the cluster is up and the plugin
// binaries are built. Tests only read it.
var E *Env

// Env describes the running cluster and the built binaries.
type Env struct {
	// Root is the repository root.
	Root string
	// BinDir holds kubectl-drift, argocd-drift and flux-drift built from
	// this checkout.
	BinDir string
	// KubeBinDir holds kubectl, kube-apiserver and etcd v1.37.2 built by
	// hack/cluster.sh (never /usr/bin/kubectl, an unrelated old version).
	KubeBinDir string
	// Kubeconfig is the admin kubeconfig; ReaderKubeconfig is a user that
	// may only get/list/watch.
	Kubeconfig       string
	ReaderKubeconfig string
	// ClusterEnv is every variable `hack/cluster.sh env` exports.
	ClusterEnv map[string]string
}

// Plugin binary names, as built into Env.BinDir.
const (
	KubectlDrift = "kubectl-drift"
	ArgoCDDrift  = "argocd-drift"
	FluxDrift    = "flux-drift"
)

func TestMain(m *testing.M) {
	os.Exit(setup(m))
}

func setup(m *testing.M) int {
	env, cleanup, err := prepare()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e setup: %v\n", err)
		return 2
	}
	defer cleanup()
	// Argo CD (and its dedicated API server) runs only if a test asked for
	// it; stopped before the binaries are removed.
	defer stopArgoCD()
	E = env
	// The Flux lab (flux_lab_test.go) runs its own API server and the real
	// Flux controllers when a test asked for it: stop them with the binary.
	defer stopFluxLab()
	// The fleet harness (fleet_test.go) runs two more API servers (spokes)
	// when a test asked for them.
	defer stopFleet()
	return m.Run()
}

func prepare() (*Env, func(), error) {
	noop := func() {}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))

	// Idempotent: returns at once when the cluster is healthy; builds the
	// binaries into the user cache on a fresh machine.
	start := exec.Command(filepath.Join(root, "hack", "cluster.sh"), "start")
	start.Dir = root
	start.Stdout, start.Stderr = os.Stderr, os.Stderr
	if err := start.Run(); err != nil {
		return nil, noop, fmt.Errorf("hack/cluster.sh start: %w", err)
	}
	out, err := exec.Command(filepath.Join(root, "hack", "cluster.sh"), "env").Output()
	if err != nil {
		return nil, noop, fmt.Errorf("hack/cluster.sh env: %w", err)
	}
	cenv := parseExports(string(out))
	env := &Env{
		Root:             root,
		KubeBinDir:       cenv["DRIFT_BIN_DIR"],
		Kubeconfig:       cenv["KUBECONFIG"],
		ReaderKubeconfig: cenv["DRIFT_READER_KUBECONFIG"],
		ClusterEnv:       cenv,
	}
	if env.KubeBinDir == "" || env.Kubeconfig == "" {
		return nil, noop, fmt.Errorf("hack/cluster.sh env printed no DRIFT_BIN_DIR/KUBECONFIG:\n%s", out)
	}

	tmp, err := os.MkdirTemp("", "drift-e2e-bin-")
	if err != nil {
		return nil, noop, err
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	env.BinDir = tmp
	for _, name := range []string{KubectlDrift, ArgoCDDrift, FluxDrift} {
		build := exec.Command("go", "build", "-o", filepath.Join(tmp, name), "./plugins/"+name)
		build.Dir = root
		if b, err := build.CombinedOutput(); err != nil {
			cleanup()
			return nil, noop, fmt.Errorf("go build ./plugins/%s: %w\n%s", name, err, b)
		}
	}
	return env, cleanup, nil
}

var exportLine = regexp.MustCompile(`^export ([A-Za-z_][A-Za-z0-9_]*)="(.*)"$`)

// parseExports reads `export K="V"` lines, expanding $VARS from the
// current environment (PATH="BIN:$PATH").
func parseExports(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		sub := exportLine.FindStringSubmatch(strings.TrimSpace(line))
		if sub == nil {
			continue
		}
		m[sub[1]] = os.ExpandEnv(sub[2])
	}
	return m
}

// Result is what a process did.
type Result struct {
	Stdout string
	Stderr string
	// Code is the exit code; -1 if the process did not exit normally.
	Code int
}

// RunOpts tunes one run of a binary.
type RunOpts struct {
	// Stdin is fed to the process when not nil.
	Stdin []byte
	// Kubeconfig replaces the admin kubeconfig (e.g. E.ReaderKubeconfig).
	Kubeconfig string
	// Env holds extra KEY=VALUE pairs, applied last.
	Env []string
	// Timeout defaults to 2 minutes.
	Timeout time.Duration
}

// baseEnv is the process environment for every run: our kubectl first on
// PATH, the admin kubeconfig, no colours, no stray kubectl settings.
func (e *Env) baseEnv(kubeconfig string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "KUBECONFIG", "KUBE_EDITOR", "EDITOR", "KUBECTL_EXTERNAL_DIFF", "NO_COLOR":
			continue
		}
		env = append(env, kv)
	}
	if kubeconfig == "" {
		kubeconfig = e.Kubeconfig
	}
	return append(env,
		"PATH="+e.BinDir+string(os.PathListSeparator)+e.ClusterEnv["PATH"],
		"KUBECONFIG="+kubeconfig,
		"DRIFT_READER_KUBECONFIG="+e.ReaderKubeconfig,
		"NO_COLOR=1",
	)
}

// Run runs bin (a name in BinDir or KubeBinDir, or a path) and returns its
// result; only a failure to start the process fails the test.
func (e *Env) Run(t testing.TB, opts RunOpts, bin string, args ...string) Result {
	t.Helper()
	path := bin
	if !strings.Contains(bin, string(os.PathSeparator)) {
		for _, dir := range []string{e.BinDir, e.KubeBinDir} {
			if _, err := os.Stat(filepath.Join(dir, bin)); err == nil {
				path = filepath.Join(dir, bin)
				break
			}
		}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(e.baseEnv(opts.Kubeconfig), opts.Env...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if opts.Stdin != nil {
		cmd.Stdin = bytes.NewReader(opts.Stdin)
	}
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: cmd.ProcessState.ExitCode()}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %s %s: %v\nstderr: %s", bin, strings.Join(args, " "), err, res.Stderr)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("run %s %s: timed out after %s", bin, strings.Join(args, " "), timeout)
	}
	return res
}

// Drift runs the built kubectl-drift with the admin kubeconfig.
func (e *Env) Drift(t testing.TB, args ...string) Result {
	t.Helper()
	return e.Run(t, RunOpts{}, KubectlDrift, args...)
}

// Kubectl runs our kubectl v1.37.2 as admin and fails the test unless it
// exits 0. It returns stdout.
func (e *Env) Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	return e.KubectlWith(t, RunOpts{}, args...)
}

// KubectlWith is Kubectl with stdin/env options (e.g. KUBE_EDITOR).
func (e *Env) KubectlWith(t testing.TB, opts RunOpts, args ...string) string {
	t.Helper()
	res := e.Run(t, opts, filepath.Join(e.KubeBinDir, "kubectl"), args...)
	if res.Code != 0 {
		t.Fatalf("kubectl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.Code, res.Stdout, res.Stderr)
	}
	return res.Stdout
}

// Apply applies a manifest from a string with the given extra kubectl
// flags, e.g. "--server-side", "--field-manager=kustomize-controller".
func (e *Env) Apply(t testing.TB, manifest string, flags ...string) {
	t.Helper()
	args := append([]string{"apply", "-f", "-"}, flags...)
	e.KubectlWith(t, RunOpts{Stdin: []byte(manifest)}, args...)
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// uniqueName returns "<prefix><name>-<6 random hex digits>", a name that
// does not collide between runs on a shared cluster: name is lowercased,
// its runs of characters a DNS label does not allow become "-", and it is
// cut so that the whole name fits in max characters (a namespace: 63).
func uniqueName(prefix, name string, max int) string {
	suffix := randomHex(3)
	base := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if room := max - len(prefix) - len(suffix) - 1; len(base) > room {
		base = strings.Trim(base[:room], "-")
	}
	return prefix + base + "-" + suffix
}

// Namespace creates a namespace "<area>-<test name>-<random>" for this test
// and deletes it (without waiting) when the test ends. The cluster is shared:
// prefix with your area (e2e, argo, flux...).
func (e *Env) Namespace(t testing.TB, area string) string {
	t.Helper()
	ns := uniqueName(area+"-", t.Name(), 63)
	e.Kubectl(t, "create", "namespace", ns)
	t.Cleanup(func() {
		if os.Getenv("DRIFT_E2E_KEEP") != "" {
			t.Logf("keeping namespace %s (DRIFT_E2E_KEEP)", ns)
			return
		}
		e.Run(t, RunOpts{}, filepath.Join(e.KubeBinDir, "kubectl"), "delete", "namespace", ns, "--wait=false")
	})
	return ns
}

// DecodeJSON decodes data into v and fails the test, showing the data,
// when it is not valid JSON.
func DecodeJSON(t testing.TB, data string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode JSON: %v\n%s", err, data)
	}
}

// AssertCleanError checks the bad-input contract: exit code 2, one line
// on stderr that starts with "error: ", and no panic or stack trace.
func AssertCleanError(t testing.TB, res Result, wantSubstr string) {
	t.Helper()
	if res.Code != 2 {
		t.Errorf("exit code = %d, want 2\nstdout: %s\nstderr: %s", res.Code, res.Stdout, res.Stderr)
	}
	for _, bad := range []string{"panic", "goroutine ", "runtime/debug", ".go:"} {
		if strings.Contains(res.Stderr, bad) {
			t.Errorf("stderr contains %q (a stack trace?):\n%s", bad, res.Stderr)
		}
	}
	lines := strings.Split(strings.TrimRight(res.Stderr, "\n"), "\n")
	var errLines []string
	for _, l := range lines {
		if strings.HasPrefix(l, "error: ") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 {
		t.Errorf("want exactly one \"error: \" line on stderr, got %d:\n%s", len(errLines), res.Stderr)
	} else if !strings.Contains(errLines[0], wantSubstr) {
		t.Errorf("error line %q does not mention %q", errLines[0], wantSubstr)
	}
}

// buildTools runs hack/build-tools.sh for names (each built once into the
// user cache, then reused; "flux" is hack/build-flux.sh's CLI) and returns
// their paths in the same order.
func buildTools(names ...string) ([]string, error) {
	cmd := exec.Command(filepath.Join(E.Root, "hack", "build-tools.sh"), names...)
	cmd.Dir = E.Root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("hack/build-tools.sh %s: %w", strings.Join(names, " "), err)
	}
	paths := strings.Fields(string(out))
	if len(paths) != len(names) {
		return nil, fmt.Errorf("hack/build-tools.sh %s printed %d paths", strings.Join(names, " "), len(paths))
	}
	return paths, nil
}

// dieWithTests makes cmd's process get SIGKILL when the test binary dies:
// a panicking test skips TestMain's deferred stops and every t.Cleanup, and
// a controller left running then reconciles the next run's objects (a
// stale kustomize-controller once fought the next run's own).
func dieWithTests(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// jsonWatch is a running `kubectl drift scan --watch -o json`, its events
// (one JSON object a line) read as they come.
type jsonWatch struct {
	ctx    context.Context
	lines  chan watchLine
	stderr *syncBuffer
	// seen is every event next has read.
	seen []map[string]any
}

// watchLine is one line of the watch's stdout: an event, or the text of a
// line that is not JSON.
type watchLine struct {
	ev  map[string]any
	bad string
}

// startJSONWatch runs kubectl-drift args (scan --watch -o json ...) as the
// user of kubeconfig ("" is the admin) until ctx ends or the test does.
func startJSONWatch(t *testing.T, ctx context.Context, kubeconfig string, args ...string) *jsonWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, filepath.Join(E.BinDir, KubectlDrift), args...)
	cmd.Env = E.baseEnv(kubeconfig)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w := &jsonWatch{ctx: ctx, lines: make(chan watchLine, 100), stderr: &syncBuffer{}}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l watchLine
			if json.Unmarshal(sc.Bytes(), &l.ev) != nil {
				l.bad = sc.Text()
			}
			w.lines <- l
		}
	}()
	return w
}

// next returns the first event want accepts; the test fails when the watch
// ends, prints a line that is not JSON, or ctx ends first.
func (w *jsonWatch) next(t *testing.T, want func(map[string]any) bool, what string) map[string]any {
	t.Helper()
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				t.Fatalf("watch ended before %s; stderr: %s", what, w.stderr.String())
			}
			if l.bad != "" {
				t.Fatalf("waiting for %s: the watch printed a line that is not JSON: %s", what, l.bad)
			}
			w.seen = append(w.seen, l.ev)
			if want(l.ev) {
				return l.ev
			}
		case <-w.ctx.Done():
			t.Fatalf("timed out waiting for %s; events: %v", what, w.seen)
		}
	}
}

// setupOnce is a setup step a test binary runs once, the first time a
// test needs it; every later test fails with the same error, if any.
type setupOnce struct {
	once sync.Once
	err  error
}

// do runs setup on first use and fails the test when it failed.
func (o *setupOnce) do(t testing.TB, setup func() error) {
	t.Helper()
	o.once.Do(func() { o.err = setup() })
	if o.err != nil {
		t.Fatal(o.err)
	}
}

// toolOnce is a tool a test binary builds (buildTools) and sets up once,
// the first time a test asks for it.
type toolOnce struct {
	setup setupOnce
	path  string
}

// get returns the path of the tool name, building it and then running
// setup (when not nil) on first use.
func (o *toolOnce) get(t testing.TB, name string, setup func() error) string {
	t.Helper()
	o.setup.do(t, func() error {
		paths, err := buildTools(name)
		if err != nil {
			return err
		}
		o.path = paths[0]
		if setup != nil {
			return setup()
		}
		return nil
	})
	return o.path
}
