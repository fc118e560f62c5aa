package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScanFleetBadFlagsExitTwo(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--contexts", "a,b", "--all-contexts"}, "exclusive"},
		{[]string{"scan", "--contexts", "a", "--watch"}, "--watch follows one cluster"},
		{[]string{"scan", "--contexts", "a", "--context", "b"}, "--context and --contexts"},
		{[]string{"scan", "--all-contexts", "--server", "https://x"}, "--server and --contexts"},
		{[]string{"scan", "--contexts", "a", "--max-concurrent-clusters", "0"}, "must be positive"},
	} {
		_, stderr, code, _ := run(t, KubectlFrontend, tt.args...)
		if code != ExitFailure || strings.Count(stderr, "error: ") != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one error line with %q", tt.args, code, stderr, tt.want)
		}
	}
}

// No cluster answers: one warning line per cluster, each saying why, and
// exit 2 (nothing was scanned), without waiting out a timeout.
func TestScanFleetNoClusterReachable(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: down
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: down-a
  context: {cluster: down, user: u}
- name: down-b
  context: {cluster: down, user: u}
current-context: down-a
`), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code, _ := run(t, KubectlFrontend, "--kubeconfig", kc, "scan", "--contexts", "down-a,missing,down-b", "-o", "prometheus")
	if code != ExitFailure {
		t.Errorf("exit %d, want 2 when no cluster could be scanned", code)
	}
	for _, want := range []string{
		"warning: contexts down-a, down-b point at the same server https://127.0.0.1:1",
		"warning: cluster down-a not scanned: cannot reach the Kubernetes API server at https://127.0.0.1:1",
		"warning: cluster down-b not scanned: cannot reach",
		`warning: cluster missing not scanned: context "missing" not found in the kubeconfig`,
		"error: no cluster could be scanned",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, `kubectl_drift_scan_clusters{result="unreachable"} 3`) {
		t.Errorf("stdout lacks the unreachable sample:\n%s", stdout)
	}
}
