//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// scanItem runs scan on ns (Argo CD only, JSON) and returns the exit code,
// deployment/web's report (nil when not listed) and the scan's notes.
func scanItem(t *testing.T, a *ArgoCD, ns string) (int, *model.Report, []model.Note) {
	t.Helper()
	res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, "scan", "-n", ns, "--engine", "argocd", "-o", "json")
	if res.Code != 0 && res.Code != 1 {
		t.Fatalf("scan: exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var scanned struct {
		Items []model.Report
		Notes []model.Note
	}
	DecodeJSON(t, res.Stdout, &scanned)
	for i := range scanned.Items {
		if r := &scanned.Items[i]; r.Resource.Kind == "Deployment" && r.Resource.Name == "web" {
			return res.Code, r, scanned.Notes
		}
	}
	return res.Code, nil, scanned.Notes
}

// explainWeb runs explain without -f (inferred, as scan judges) on
// deployment/web.
func explainWeb(t *testing.T, a *ArgoCD, ns string) (int, model.Report) {
	t.Helper()
	res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, "explain", "deployment/web", "-n", ns, "--engine", "argocd", "--argocd-namespace", a.Namespace, "-o", "json")
	var r model.Report
	DecodeJSON(t, res.Stdout, &r)
	return res.Code, r
}

// bothDrifted runs scan and explain without -f on deployment/web, both of
// which must say drift (exit 1), and returns their reports and the scan's
// notes.
func bothDrifted(t *testing.T, a *ArgoCD, ns string) (scanned *model.Report, notes []model.Note, explained model.Report) {
	t.Helper()
	code, web, notes := scanItem(t, a, ns)
	if code != 1 || web == nil {
		t.Fatalf("scan: exit %d, deployment/web listed %v; want exit 1 and the object", code, web != nil)
	}
	exCode, ex := explainWeb(t, a, ns)
	if exCode != 1 {
		t.Errorf("explain: exit %d, want 1", exCode)
	}
	return web, notes, ex
}

// onlyEngineWrote fails unless only Argo CD's controller wrote the object:
// then a scan's precheck alone would skip it, which is the case tested.
func onlyEngineWrote(t *testing.T, a *ArgoCD, ns string) {
	t.Helper()
	var obj struct {
		Metadata struct {
			ManagedFields []struct{ Manager string } `json:"managedFields"`
		} `json:"metadata"`
	}
	DecodeJSON(t, a.Kubectl(t, "-n", ns, "get", "deployment/web", "-o", "json", "--show-managed-fields"), &obj)
	for _, m := range obj.Metadata.ManagedFields {
		if m.Manager != "argocd-controller" {
			t.Fatalf("manager %s wrote deployment/web: the scan would judge it anyway", m.Manager)
		}
	}
}

// TestArgoInferredScanUnowned: drift managedFields cannot show, which scan
// used to skip while explain without -f reported it, against the running
// controller (client-side apply, Argo CD's default):
//
//   - a field Git sets deleted live with a JSON patch (nobody owns what is
//     gone): scan reports it as explain does, reverted by self-heal; the
//     controller's self-heal then puts it back;
//   - a Git commit not synced yet (no auto-sync; live unchanged, equal to
//     the last sync): scan reports the object OutOfSync from the
//     Application's status.resources, as explain does and as the
//     Application says.
func TestArgoInferredScanUnowned(t *testing.T) {
	a := RealArgoCD(t)

	t.Run("field deleted live", func(t *testing.T) {
		ns, app := syncedWebApp(t, a, "scan-deleted-live")
		// Stopped, the controller cannot self-heal before the scan reads
		// the object; the Application asks for self-heal meanwhile.
		a.kill("controller")
		t.Cleanup(func() {
			// A failure before the restart below must not leave the
			// shared harness without its controller.
			a.mu.Lock()
			running := a.procs["controller"] != nil
			a.mu.Unlock()
			if !running {
				a.RestartController(t)
			}
		})
		a.Kubectl(t, "-n", a.Namespace, "patch", "application", app, "--type=merge", "-p", `{"spec":{"syncPolicy":{"automated":{"selfHeal":true}}}}`)
		a.Kubectl(t, "-n", ns, "patch", "deployment/web", "--type=json", "-p", `[{"op":"remove","path":"/metadata/labels/team"}]`)
		onlyEngineWrote(t, a, ns)

		const team = "/metadata/labels/team"
		web, notes, ex := bothDrifted(t, a, ns)
		got := map[string]model.VerdictKind{}
		for _, d := range web.Drifts {
			if v := argoVerdictOf(d); v != nil {
				got[d.Path] = v.Kind
				t.Logf("scan: %s %s: %s", d.Path, v.Kind, v.Reason)
			}
		}
		want := map[string]model.VerdictKind{}
		for _, d := range ex.Drifts {
			if v := argoVerdictOf(d); v != nil {
				want[d.Path] = v.Kind
			}
		}
		if got[team] != model.Reverted || len(got) != len(want) || got[team] != want[team] {
			t.Errorf("scan verdicts %v, explain %v; want %s reverted in both", got, want, team)
		}
		for _, n := range web.Notes {
			if n.Reason == "argocd-last-applied" {
				t.Errorf("argocd-last-applied repeated on the scanned object")
			}
		}
		said := 0
		for _, n := range notes {
			if n.Reason == "argocd-last-applied" {
				said++
			}
		}
		if said != 1 {
			t.Errorf("scan notes %+v: want argocd-last-applied once", notes)
		}

		// The controller's self-heal puts the label back. A restarted
		// controller compares an Application on its next resync (2 min
		// plus jitter here, appResyncPeriod); a hard refresh asks for that
		// comparison now, as the UI's Refresh does. Self-heal then acts on
		// the comparison's OutOfSync as on any other.
		a.RestartController(t)
		a.RefreshHard(t, app)
		deadline := time.Now().Add(60 * time.Second)
		for {
			v := strings.TrimSpace(a.Kubectl(t, "-n", ns, "get", "deployment/web", "-o", "jsonpath={.metadata.labels.team}"))
			if v == "shop" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("self-heal did not put label team back (now %q)\ncontroller log:\n%s", v, a.LogTail("controller", 15))
			}
			time.Sleep(500 * time.Millisecond)
		}
		a.WaitSynced(t, app, 60*time.Second)
		if code, web, _ := scanItem(t, a, ns); code != 0 || web != nil {
			t.Errorf("after self-heal: scan exit %d, deployment/web listed %v; want 0 and nothing", code, web != nil)
		}
	})

	t.Run("commit not synced", func(t *testing.T) {
		ns, app := syncedWebApp(t, a, "scan-not-synced")
		a.Commit(t, "replicas in "+ns, map[string]string{"apps/" + ns + "/manifests.yaml": strings.Replace(webDeploy, "replicas: 2", "replicas: 3", 1)})
		st, item := a.refreshedItem(t, app, "Deployment", "web")
		if st.Sync.Status != "OutOfSync" || !item.Modified {
			t.Fatalf("Argo CD: Application %s, web modified %v; want OutOfSync after the commit", st.Sync.Status, item.Modified)
		}
		var appObj struct {
			Status struct {
				Resources []struct{ Kind, Name, Status string } `json:"resources"`
			} `json:"status"`
		}
		DecodeJSON(t, a.Kubectl(t, "-n", a.Namespace, "get", "application", app, "-o", "json"), &appObj)
		recorded := ""
		for _, r := range appObj.Status.Resources {
			if r.Kind == "Deployment" && r.Name == "web" {
				recorded = r.Status
			}
		}
		if recorded != "OutOfSync" {
			t.Fatalf("the Application's status.resources records web %q, want OutOfSync", recorded)
		}
		onlyEngineWrote(t, a, ns)

		web, _, ex := bothDrifted(t, a, ns)
		sst, _ := web.StatusOf(model.Engine("argocd"))
		est, _ := ex.StatusOf(model.Engine("argocd"))
		if !sst.Drift || sst.Status != "OutOfSync" || sst != est {
			t.Errorf("scan status %+v, explain %+v; want OutOfSync in both", sst, est)
		}
		if len(web.Drifts) != len(ex.Drifts) {
			t.Errorf("scan lists %d fields, explain %d", len(web.Drifts), len(ex.Drifts))
		}
	})
}
