//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestArgoLiveStatus: scan --watch and serve, started before a Git commit,
// follow the running controller's Application status without a restart.
// The commit changes a field Git sets (replicas) of an Application without
// auto-sync, so the live object stays equal to the last sync and only the
// Application's status.resources says OutOfSync: both report the object
// drifted within seconds of the controller recording it. A sync by the
// real controller then clears it in both.
func TestArgoLiveStatus(t *testing.T) {
	a := RealArgoCD(t)
	ns, app := syncedWebApp(t, a, "live-status")
	a.WaitSynced(t, app, 60*time.Second)
	onlyEngineWrote(t, a, ns)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := startJSONWatch(t, ctx, a.Kubeconfig, "scan", "-n", ns, "--engine", "argocd", "--watch", "-o", "json", "--watch-timeout", "220s")
	addr, serveLog, _ := startServe(t, a.Kubeconfig, "-n", ns, "--engine", "argocd")
	drifted := fmt.Sprintf(`kubectl_drift_objects{engine="argocd",kind="Deployment.apps",namespace=%q} 1`, ns)
	waitServeMetrics(t, addr, serveLog, "web owned and judged clean", func(m string) bool {
		return strings.Contains(m, "kubectl_drift_serve_ready 1") && strings.Contains(m, "kubectl_drift_owned_objects ") &&
			!strings.Contains(m, "kubectl_drift_owned_objects 0") && !strings.Contains(m, "kubectl_drift_objects{")
	})

	a.Commit(t, "replicas in "+ns, map[string]string{"apps/" + ns + "/manifests.yaml": strings.Replace(webDeploy, "replicas: 2", "replicas: 3", 1)})
	committed := time.Now()
	if st, item := a.refreshedItem(t, app, "Deployment", "web"); st.Sync.Status != "OutOfSync" || !item.Modified {
		t.Fatalf("Argo CD: Application %s, web modified %v; want OutOfSync after the commit", st.Sync.Status, item.Modified)
	}
	isWeb := func(typ string) func(map[string]any) bool {
		return func(ev map[string]any) bool {
			res, _ := ev["resource"].(map[string]any)
			return ev["type"] == typ && res["kind"] == "Deployment" && res["name"] == "web" && ev["path"] == ""
		}
	}
	// serve first, without failing yet: a serve that misses it must not
	// hide whether the watch does.
	if !serveSees(t, addr, serveLog, time.Minute, func(m string) bool { return strings.Contains(m, drifted) }) {
		t.Errorf("serve: web not drifted within 60s of the Application recording OutOfSync\nserve:\n%s", serveLog.String())
	} else {
		t.Logf("OutOfSync seen by serve %s after the commit", time.Since(committed).Round(100*time.Millisecond))
	}
	ev := within(t, w, time.Minute, isWeb("drifted"), "web drifted after the commit")
	if st, _ := ev["status"].(string); !strings.Contains(st, "OutOfSync") {
		t.Errorf("watch event %v: want the Application's OutOfSync", ev)
	}
	t.Logf("OutOfSync seen by the watch %s after the commit", time.Since(committed).Round(100*time.Millisecond))
	if t.Failed() {
		t.FailNow()
	}
	onlyEngineWrote(t, a, ns) // nothing but the status changed

	argoSync(t, a, app)
	a.WaitSynced(t, app, 60*time.Second)
	synced := time.Now()
	if got := strings.TrimSpace(a.Kubectl(t, "-n", ns, "get", "deployment/web", "-o", "jsonpath={.spec.replicas}")); got != "3" {
		t.Fatalf("after the sync: replicas %s, want 3", got)
	}
	// The sync wrote the object after the drift began: reverted.
	within(t, w, time.Minute, isWeb("reverted"), "web's OutOfSync ended by the sync")
	waitServeMetrics(t, addr, serveLog, "web clean after the sync", func(m string) bool {
		return !strings.Contains(m, "kubectl_drift_objects{")
	})
	t.Logf("Synced seen by watch and serve %s after the sync", time.Since(synced).Round(100*time.Millisecond))
}

// within is w.next failing after d.
func within(t *testing.T, w *jsonWatch, d time.Duration, want func(map[string]any) bool, what string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, d)
	defer cancel()
	bounded := *w
	bounded.ctx = ctx
	ev := bounded.next(t, want, what)
	w.seen = bounded.seen
	return ev
}

// serveSees polls serve's metrics at addr until ok or d passed.
func serveSees(t *testing.T, addr string, log *syncBuffer, d time.Duration, ok func(string) bool) bool {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ok(serveMetrics(t, addr, log)) {
			return true
		}
	}
	return false
}
