package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// endless is stdin that never ends (cat /dev/zero | kubectl drift ...).
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// runBounded runs the kubectl door in process and fails the test if it
// does not end within bound.
func runBounded(t *testing.T, bound time.Duration, stdin io.Reader, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	streams := genericiooptions.IOStreams{In: stdin, Out: &o, ErrOut: &e}
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), KubectlFrontend, streams, args)
	}()
	select {
	case code = <-done:
	case <-time.After(bound):
		t.Fatalf("%v did not end within %s", args, bound)
	}
	return code, o.String(), e.String()
}

// TestHostileInputs: every kind of bad input ends within its bound, with
// exit code 2 and exactly one line on stderr, and without allocating
// more than the 16 MiB input limit allows; a huge but valid list succeeds
// quickly.
func TestHostileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 16 MiB inputs")
	}
	dir := t.TempDir()
	write := func(name, content string) string { return testutil.WriteFile(t, dir, name, content) }
	sparse := func(name string, size int64) string {
		p := write(name, "")
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := sparse("huge.yaml", 17<<20)
	kz := filepath.Join(dir, "kz")
	write("kz/kustomization.yaml", "resources:\n- big.yaml\n")
	sparse("kz/big.yaml", 17<<20)
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	bad := write("bad.yaml", "apiVersion: v1\nkind: [unclosed\n")
	bomb := write("bomb.yaml", testutil.AliasBomb(7)+"apiVersion: v1\nkind: ConfigMap\n")
	notObject := write("list.yaml", "- a\n- b\n")
	live, _ := longListObjects(t, 1_000)

	const bound = 10 * time.Second
	for _, tc := range []struct {
		name  string
		stdin io.Reader
		args  []string
		want  string // in the one stderr line
	}{
		{"live-file /dev/zero", nil, []string{"explain", "--live-file", "/dev/zero"}, "over the 16 MiB limit"},
		{"live-file stdin endless", endless{}, []string{"explain", "--live-file", "-"}, "over the 16 MiB limit"},
		{"live-file huge", nil, []string{"explain", "--live-file", huge}, "file is 17 MiB, over the 16 MiB limit"},
		{"live-file FIFO without writer", nil, []string{"explain", "--live-file", fifo}, "holds no Kubernetes object"},
		{"live-file malformed", nil, []string{"explain", "--live-file", bad}, "invalid YAML"},
		{"live-file alias bomb", nil, []string{"explain", "--live-file", bomb}, "alias"},
		{"live-file not an object", nil, []string{"explain", "--live-file", notObject}, "not a Kubernetes object"},
		{"-f /dev/zero", nil, []string{"explain", "--live-file", live, "-f", "/dev/zero"}, "over the 16 MiB limit"},
		{"-f stdin endless", endless{}, []string{"explain", "--live-file", live, "-f", "-"}, "over the 16 MiB limit"},
		{"-f FIFO", nil, []string{"explain", "--live-file", live, "-f", fifo}, "no Kubernetes object found"},
		{"-f dir with FIFO", nil, []string{"explain", "--live-file", live, "-f", dir}, ""},
		{"-k kustomization naming a huge file", nil, []string{"explain", "--live-file", live, "-k", kz}, "over the 16 MiB limit"},
		{"--rules /dev/zero", nil, []string{"explain", "--live-file", live, "--rules", "/dev/zero"}, "over the 16 MiB limit"},
		{"--argocd-diff /dev/zero", nil, []string{"explain", "--live-file", live, "--argocd-diff", "/dev/zero"}, "over the 16 MiB limit"},
		{"--argocd-diff malformed", nil, []string{"explain", "--live-file", live, "--argocd-diff", bad}, "managed-resources"},
		{"normalize /dev/zero", nil, []string{"normalize", "-f", "/dev/zero", "--engine", "argocd"}, "over the 16 MiB limit"},
		{"normalize huge", nil, []string{"normalize", "-f", huge, "--engine", "flux"}, "over the 16 MiB limit"},
		{"normalize FIFO", nil, []string{"normalize", "-f", fifo, "--engine", "flux"}, "no object found"},
		{"normalize alias bomb", nil, []string{"normalize", "-f", bomb, "--engine", "argocd"}, "alias"},
		{"normalize --diff desired /dev/zero", nil, []string{"normalize", "-f", live, "--engine", "argocd", "--diff", "-f", "/dev/zero"}, "over the 16 MiB limit"},
		{"audit --config /dev/zero", nil, []string{"audit", dir, "--config", "/dev/zero"}, "over the 16 MiB limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			code, _, errOut := runBounded(t, bound, tc.stdin, tc.args...)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if code != ExitFailure {
				t.Errorf("exit %d, want 2; stderr: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") {
				t.Errorf("stderr is %d lines, want one error line:\n%s", len(lines), errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q does not say %q", errOut, tc.want)
			}
			// Reading through the limit costs a few times 16 MiB at most
			// (io.ReadAll doubles its buffer), never the GBs /dev/zero has.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
			t.Logf("%s in %s", tc.name, time.Since(start).Round(time.Millisecond))
		})
	}

	t.Run("huge list succeeds", func(t *testing.T) {
		live, desired := longListObjects(t, 50_000)
		start := time.Now()
		// The bound only catches a hang: speed is BenchmarkExplainLongList's
		// to measure (a 30 s bound failed under -race on a loaded machine).
		code, out, errOut := runBounded(t, 3*time.Minute, nil, "explain", "--live-file", live, "-f", desired, "-o", "json")
		if code != ExitDrift || !strings.Contains(out, "env[name=E25000].value") {
			t.Fatalf("exit %d, want 1 with the one changed item; stderr: %s", code, errOut)
		}
		t.Logf("50k list items in %s", time.Since(start).Round(time.Millisecond))
	})
}
