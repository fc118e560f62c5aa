//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// TestHarness checks the harness itself: the built plugin runs, our kubectl
// talks to the cluster, a namespace can be made, and the read-only user
// can list but not write.
func TestHarness(t *testing.T) {
	res := E.Drift(t, "version")
	if res.Code != 0 || !strings.Contains(res.Stdout, "kubectl drift") {
		t.Fatalf("kubectl-drift version: exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
	}
	if v := E.Kubectl(t, "version", "-o", "json"); !strings.Contains(v, `"gitVersion": "v1.37.2"`) {
		t.Fatalf("kubectl is not v1.37.2:\n%s", v)
	}
	ns := E.Namespace(t, "e2e")
	E.Kubectl(t, "-n", ns, "create", "configmap", "probe", "--from-literal=a=b")
	list := E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, "kubectl", "-n", ns, "get", "configmaps", "-o", "name")
	if list.Code != 0 || !strings.Contains(list.Stdout, "configmap/probe") {
		t.Fatalf("reader cannot list: exit %d\n%s%s", list.Code, list.Stdout, list.Stderr)
	}
	write := E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, "kubectl", "-n", ns, "delete", "configmap", "probe")
	if write.Code == 0 || !strings.Contains(write.Stderr, "forbidden") {
		t.Fatalf("reader could delete (exit %d): %s%s", write.Code, write.Stdout, write.Stderr)
	}
}
