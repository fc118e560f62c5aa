//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScanWatchSource follows drift with `scan --watch --source`: the
// Flux lab's real kustomize-controller applies a Kustomization
// (postBuild.substituteFrom a ConfigMap on the cluster) from the
// checkout; while the watch runs, kubectl changes an env value the
// Kustomization renders, and the watch reports it judged against the
// render. Then kubectl writes the rendered value back: kubectl's field
// manager still owns the field, so managedFields alone would keep calling
// it drift; against the render it is over ("resolved", no engine took it
// back).
func TestScanWatchSource(t *testing.T) {
	l := lab(t)
	ns := l.namespace(t, "watch-source")
	const greeting = "hello from the cluster"
	l.kubectl(t, RunOpts{}, "-n", ns, "create", "configmap", "vars", "--from-literal=greeting="+greeting, "--from-literal=tier=frontend")
	rev := l.gitRepo(t, ns, renderLabFiles)
	l.kustomization(t, ns, rev, `targetNamespace: `+ns+`
namePrefix: p-
postBuild:
  substituteFrom: [{kind: ConfigMap, name: vars}]
`)
	dir := t.TempDir()
	for name, body := range renderLabFiles {
		fluxWrite(t, dir, name, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	w := startJSONWatch(t, ctx, l.kubeconfig, "scan", "-n", ns, "--watch", "-o", "json", "--watch-timeout", "110s",
		// A plain directory, not a git repository: --working-tree
		// renders it as it is, without the warning that the ref cannot
		// be read from history.
		"--source", dir, "--working-tree", "--source-map", "https://example.invalid/repo.git="+filepath.Join(dir, "app"))
	greetingOf := func(ev map[string]any) bool {
		r, _ := ev["resource"].(map[string]any)
		fp, _ := ev["fieldPath"].(string)
		return r["kind"] == "Deployment" && r["name"] == "p-web" && strings.Contains(fp, "GREETING")
	}

	// managedFields times have one-second resolution: the edit must come
	// after kustomize-controller's apply to be told from it.
	time.Sleep(1100 * time.Millisecond)
	l.kubectl(t, RunOpts{}, "-n", ns, "set", "env", "deployment/p-web", "GREETING=edited")
	ev := w.next(t, func(ev map[string]any) bool { return ev["type"] == "drifted" && greetingOf(ev) }, "the drift of GREETING")
	if ev["desiredSource"] != "rendered" || ev["manager"] != "kubectl-set" || ev["class"] != "manual" {
		t.Errorf("drift event %v: want desiredSource rendered, manager kubectl-set, class manual", ev)
	}
	if o, _ := ev["owner"].(string); !strings.Contains(o, ns+"/apps") {
		t.Errorf("drift event %v: owner %q, want Kustomization %s/apps", ev, o, ns)
	}

	// The rendered value, written back by kubectl (still its field).
	l.kubectl(t, RunOpts{}, "-n", ns, "set", "env", "deployment/p-web", "GREETING="+greeting)
	ev = w.next(t, func(ev map[string]any) bool {
		return (ev["type"] == "resolved" || ev["type"] == "reverted") && greetingOf(ev)
	}, "the end of the GREETING drift, judged against the render")
	if ev["type"] != "resolved" || ev["desiredSource"] != "rendered" {
		t.Errorf("end event %v: want resolved (kubectl wrote the rendered value back), desiredSource rendered", ev)
	}
	if l := w.stderr.String(); strings.Contains(l, "warning") {
		t.Errorf("the watch warned: %s", l)
	}
}
