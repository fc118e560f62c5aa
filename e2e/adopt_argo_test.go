//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// argoApp creates Application NAME for apps/NS (manual sync) and waits for
// its first sync.
func argoApp(t *testing.T, a *ArgoCD, name, ns string) {
	t.Helper()
	spec := fmt.Sprintf("  project: default\n  source: {repoURL: %q, path: apps/%s, targetRevision: HEAD}\n  destination: {server: https://kubernetes.default.svc, namespace: %s}\n",
		a.RepoURL, ns, ns)
	a.CreateApp(t, name, "", spec)
	t.Cleanup(func() {
		if os.Getenv("DRIFT_E2E_KEEP") == "" {
			_ = a.kubectlRaw("", "-n", a.Namespace, "delete", "application", name, "--wait=false")
		}
	})
	a.waitOperation(t, name, 90*time.Second)
}

// argoSync runs one sync operation with the Application's sync options,
// as `argocd app sync` and auto-sync do (the controller reads the options
// from the operation: controller/sync.go syncOp.SyncOptions), and waits
// until the controller has finished it.
func argoSync(t *testing.T, a *ArgoCD, app string) {
	t.Helper()
	// The operation carries a nonce in its info: startedAt has second
	// resolution, so a sync started in the same second as the previous one
	// (the Application's first) could not be told from it.
	nonce := fmt.Sprintf("%d", time.Now().UnixNano())
	var opts []string
	if s := strings.TrimSpace(a.Kubectl(t, "-n", a.Namespace, "get", "application", app, "-o", "jsonpath={.spec.syncPolicy.syncOptions}")); s != "" {
		DecodeJSON(t, s, &opts)
	}
	op, _ := json.Marshal(map[string]any{"operation": map[string]any{"initiatedBy": map[string]any{"username": "e2e"},
		"info": []map[string]string{{"name": "e2e-sync", "value": nonce}},
		"sync": map[string]any{"revision": "HEAD", "syncOptions": opts}}})
	a.Kubectl(t, "-n", a.Namespace, "patch", "application", app, "--type=merge", "-p", string(op))
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		var obj struct {
			Operation any `json:"operation"`
			Status    struct {
				OperationState struct {
					Phase     string `json:"phase"`
					Message   string `json:"message"`
					Operation struct {
						Info []struct {
							Name  string `json:"name"`
							Value string `json:"value"`
						} `json:"info"`
					} `json:"operation"`
				} `json:"operationState"`
			} `json:"status"`
		}
		DecodeJSON(t, a.Kubectl(t, "-n", a.Namespace, "get", "application", app, "-o", "json"), &obj)
		st := obj.Status.OperationState
		ours := false
		for _, i := range st.Operation.Info {
			ours = ours || (i.Name == "e2e-sync" && i.Value == nonce)
		}
		if obj.Operation == nil && ours {
			switch st.Phase {
			case "Succeeded":
				return
			case "Failed", "Error":
				t.Fatalf("sync of %s: %s: %s", app, st.Phase, st.Message)
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("sync of %s did not finish\n%s", app, a.LogTail("controller", 15))
}

// hotfix sets web's app image to nginx:1.29 with kubectl and waits until
// Argo CD says the Application is OutOfSync.
func hotfix(t *testing.T, a *ArgoCD, app, ns string) {
	t.Helper()
	a.Kubectl(t, "-n", ns, "set", "image", "deployment/web", "app=nginx:1.29")
	// A hard refresh that finds a refresh already running can return
	// before the controller's cache has the edit (as in the conformance
	// suite): ask again a few times before calling it Synced.
	st := a.RefreshHard(t, app)
	for i := 0; i < 4 && st.Sync.Status != "OutOfSync"; i++ {
		time.Sleep(time.Second)
		st = a.RefreshHard(t, app)
	}
	if st.Sync.Status != "OutOfSync" {
		t.Fatalf("after the hotfix Argo CD says %s, want OutOfSync", st.Sync.Status)
	}
}

// TestAdoptArgoReal: a hotfix adopted into the Git checkout of a real Argo
// CD; after the commit and a hard refresh the Application is Synced and
// the hotfix value stayed.
func TestAdoptArgoReal(t *testing.T) {
	a := RealArgoCD(t)
	ns := E.argoNamespace(t, a, "adopt")
	app := "adopt-" + ns
	files := adoptCheckout(ns)
	a.Commit(t, "add "+app, map[string]string{"apps/" + ns + "/deployment.yaml": files["deployment.yaml"]})
	argoApp(t, a, app, ns)

	hotfix(t, a, app, ns)
	file := filepath.Join(a.RepoDir, "apps", ns, "deployment.yaml")
	res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, "adopt", "deploy/web", "-n", ns, "-f", file, "--argocd-namespace", a.Namespace)
	if res.Code != 0 {
		t.Fatalf("adopt: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(files["deployment.yaml"], `"nginx:1.27"`, `"nginx:1.29"`, 1)
	if string(b) != want {
		t.Fatalf("adopted file:\n%s\nwant:\n%s\n(adopt said %s)", b, want, res.Stdout)
	}
	a.Commit(t, "adopt hotfix", map[string]string{"apps/" + ns + "/deployment.yaml": string(b)})
	for i := 0; i < 2; i++ {
		if st := a.RefreshHard(t, app); st.Sync.Status != "Synced" {
			t.Fatalf("refresh %d after the commit: %s, want Synced", i+1, st.Sync.Status)
		}
	}
	if img := strings.TrimSpace(a.Kubectl(t, "-n", ns, "get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}")); img != "nginx:1.29" {
		t.Fatalf("image %s, want the adopted nginx:1.29", img)
	}
}

// TestAdoptArgoSourceReal: adopt --source on the real Argo CD's Git
// checkout finds the file through the Application that the live object's
// tracking id names: a directory source's manifest, and a kustomize
// source's kustomization (its images field, where kustomize takes the
// tag from). After the commit, a sync by the real controller of the new
// revision leaves each Application Synced at that revision, the hotfix
// value live.
func TestAdoptArgoSourceReal(t *testing.T) {
	a := RealArgoCD(t)
	base := adoptCheckout("NS")["deployment.yaml"]
	for _, c := range []struct {
		name string
		// files of the source path, by name, and the one adopt edits
		// with what it changes.
		files    map[string]string
		edited   string
		from, to string
	}{
		{name: "directory", files: map[string]string{"deployment.yaml": base}, edited: "deployment.yaml", from: `"nginx:1.27"`, to: `"nginx:1.29"`},
		{name: "kustomize", files: map[string]string{
			"deployment.yaml":    strings.Replace(base, `"nginx:1.27"`, "nginx", 1),
			"kustomization.yaml": "resources:\n  - deployment.yaml\nimages:\n  - name: nginx\n    newTag: \"1.27\" # pinned\n",
		}, edited: "kustomization.yaml", from: `newTag: "1.27"`, to: `newTag: "1.29"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := E.argoNamespace(t, a, "adopt-src-"+c.name)
			app := "adopt-src-" + ns
			files := map[string]string{}
			for n, body := range c.files {
				files["apps/"+ns+"/"+n] = strings.ReplaceAll(body, "NS", ns)
			}
			a.Commit(t, "add "+app, files)
			argoApp(t, a, app, ns)
			hotfix(t, a, app, ns)

			rel := "apps/" + ns + "/" + c.edited
			file := filepath.Join(a.RepoDir, rel)
			res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, "adopt", "deploy/web", "-n", ns, "--source", a.RepoDir, "--argocd-namespace", a.Namespace)
			if res.Code != 0 || !strings.Contains(res.Stdout, "wrote "+file+": ") {
				t.Fatalf("adopt --source: exit %d, want 0 and %s written\n%s\n%s", res.Code, file, res.Stdout, res.Stderr)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Replace(files[rel], c.from, c.to, 1); string(b) != want || want == files[rel] {
				t.Fatalf("adopted %s:\n%s\nwant:\n%s\n(adopt said %s)", c.edited, b, want, res.Stdout)
			}
			a.Commit(t, "adopt hotfix "+app, map[string]string{rel: string(b)})
			head, err := exec.Command("git", "-C", a.RepoDir, "rev-parse", "HEAD").Output()
			if err != nil {
				t.Fatal(err)
			}
			argoSync(t, a, app)
			if st := a.RefreshHard(t, app); st.Sync.Status != "Synced" || st.Sync.Revision != strings.TrimSpace(string(head)) {
				t.Fatalf("after the sync of the adopted commit %s: %s at %s, want Synced at it", strings.TrimSpace(string(head)), st.Sync.Status, st.Sync.Revision)
			}
			if img := strings.TrimSpace(a.Kubectl(t, "-n", ns, "get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}")); img != "nginx:1.29" {
				t.Fatalf("image %s, want the adopted nginx:1.29", img)
			}
		})
	}
}

// TestSuggestArgoReal: replicas written by kube-controller-manager through
// the scale subresource (an HPA) are reverted by a real Argo CD sync; the
// suggested ignoreDifferences rule with RespectIgnoreDifferences=true, once
// in the Application, keeps them across two syncs and the app is Synced.
func TestSuggestArgoReal(t *testing.T) {
	a := RealArgoCD(t)
	ns := E.argoNamespace(t, a, "suggest")
	app := "suggest-" + ns
	a.Commit(t, "add "+app, map[string]string{"apps/" + ns + "/deployment.yaml": adoptCheckout(ns)["deployment.yaml"]})
	argoApp(t, a, app, ns)
	replicas := func() string {
		return strings.TrimSpace(a.Kubectl(t, "-n", ns, "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"))
	}
	hpa := func() {
		a.Kubectl(t, "-n", ns, "patch", "deployment/web", "--subresource=scale", "--type=merge",
			"-p", `{"spec":{"replicas":5}}`, "--field-manager=kube-controller-manager")
	}
	hpa()
	argoSync(t, a, app)
	if r := replicas(); r != "2" {
		t.Fatalf("without a rule a sync leaves replicas %s, want Git's 2", r)
	}
	hpa()

	res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, "suggest", "deploy/web", "-n", ns, "--argocd-namespace", a.Namespace, "--engine", "argocd", "-o", "json")
	if res.Code != 0 {
		t.Fatalf("suggest: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var list struct {
		Items []struct {
			Path   string         `json:"path"`
			Argo   map[string]any `json:"argocd"`
			Checks []struct {
				Verdict string `json:"verdict"`
				OK      bool   `json:"ok"`
			} `json:"checks"`
		} `json:"items"`
	}
	DecodeJSON(t, res.Stdout, &list)
	if len(list.Items) != 1 || list.Items[0].Path != "/spec/replicas" || len(list.Items[0].Checks) != 1 || !list.Items[0].Checks[0].OK {
		t.Fatalf("suggestions:\n%s\n%s", res.Stdout, res.Stderr)
	}
	rule := list.Items[0].Argo
	respect, _ := rule["respectIgnoreDifferences"].(bool)
	delete(rule, "respectIgnoreDifferences")
	if !respect {
		t.Fatalf("Git holds replicas: RespectIgnoreDifferences=true must be suggested: %v", rule)
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{
		"ignoreDifferences": []any{rule},
		"syncPolicy":        map[string]any{"syncOptions": []any{"RespectIgnoreDifferences=true"}},
	}})
	a.Kubectl(t, "-n", a.Namespace, "patch", "application", app, "--type=merge", "-p", string(patch))
	for i := 1; i <= 2; i++ {
		argoSync(t, a, app)
		if r := replicas(); r != "5" {
			t.Fatalf("sync %d with the suggested rule: replicas %s, want the autoscaler's 5", i, r)
		}
		if st := a.RefreshHard(t, app); st.Sync.Status != "Synced" {
			t.Fatalf("refresh %d with the suggested rule: %s, want Synced", i, st.Sync.Status)
		}
	}
}
