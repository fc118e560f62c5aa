package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// silentListener is a server that accepts TCP connections and never
// writes a byte: the TLS handshake never completes. It stands for a
// firewall or a wedged load balancer in front of the API server.
func silentListener(t *testing.T) string {
	t.Helper()
	return "https://" + testutil.NewSilentServer(t).Addr
}

// Every command that reads the cluster gives up on a silent server within
// the TLS handshake bound (10s) plus slack, in one line naming the server,
// exit 2. Before, discovery's retries made this 40s (explain) to 130s+ (scan).
func TestSilentServerFailsFastInOneLine(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a TLS handshake timeout")
	}
	server := silentListener(t)
	cases := [][]string{
		{"explain", "deploy/web", "-n", "shop"},
		{"scan", "-n", "shop"},
		{"rules", "--from-cluster"},
	}
	var wg sync.WaitGroup
	for _, args := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			full := append([]string{"--kubeconfig", "/dev/null", "--server", server, "--insecure-skip-tls-verify", "--cache-dir", t.TempDir()}, args...)
			start := time.Now()
			stdout, stderr, code, _ := run(t, KubectlFrontend, full...)
			took := time.Since(start)
			if code != ExitFailure {
				t.Errorf("%v: exit %d, want 2 (stdout %q, stderr %q)", args, code, stdout, stderr)
			}
			if took > 25*time.Second {
				t.Errorf("%v: took %s, want under 25s (10s handshake bound)", args, took)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, strings.TrimPrefix(server, "https://")) || !strings.Contains(last, "TLS handshake timeout") {
				t.Errorf("%v: error %q does not say which server did not answer and why", args, last)
			}
			if n := strings.Count(stderr, "error:"); n != 1 {
				t.Errorf("%v: %d error lines, want 1:\n%s", args, n, stderr)
			}
		}()
	}
	wg.Wait()
}

// A server that completes TLS but never answers a request: --request-timeout
// is honoured for every request, and the error says so.
func TestRequestTimeoutIsHonoured(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-block
	}))
	defer srv.Close()
	defer close(block)
	start := time.Now()
	_, stderr, code, _ := run(t, KubectlFrontend, "--kubeconfig", "/dev/null", "--server", srv.URL, "--insecure-skip-tls-verify",
		"--cache-dir", t.TempDir(), "--request-timeout", "1s", "explain", "deploy/web", "-n", "shop")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s with --request-timeout 1s", took)
	}
	if code != ExitFailure || !strings.Contains(stderr, srv.URL) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q: want exit 2 and one line naming %s", code, stderr, srv.URL)
	}
}

// Every request says it comes from kubectl-drift, not Go-http-client.
func TestUserAgentOnEveryRequest(t *testing.T) {
	var (
		mu     sync.Mutex
		agents = map[string]bool{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents[r.UserAgent()] = true
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for _, args := range [][]string{{"explain", "deploy/web"}, {"scan"}, {"rules", "--from-cluster"}} {
		run(t, KubectlFrontend, append([]string{"--kubeconfig", "/dev/null", "--server", srv.URL, "--cache-dir", t.TempDir()}, args...)...)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(agents) != 1 || !agents[cluster.UserAgent()] {
		t.Errorf("user agents %v, want only %q", agents, cluster.UserAgent())
	}
	if !strings.HasPrefix(cluster.UserAgent(), "kubectl-drift/") {
		t.Errorf("user agent %q", cluster.UserAgent())
	}
}
