//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ownerGroups are the owner-lookup scenarios of issue 32 (classes M1, M2
// and W3 of docs/verdicts.md), one group per tracking method of argocd-cm.
// Each runs through runArgoScenario: Argo CD's own status, diff and
// self-heal against the tool's exit code, fields and verdicts, with -f and
// inferred. What a person does to the tracking marks:
//
//   - M1: kubectl apply (client-side) of the Git manifest with one value
//     changed: Argo CD's own client-side sync wrote its tracking marks into
//     last-applied-configuration, so kubectl deletes them. Argo CD still
//     compares the object (it is in the target), reports the missing marks
//     and the changed value, and a sync restores them.
//   - a mark deleted alone (kubectl annotate/label KEY-): with annotation
//     tracking the missing annotation is the drift; with annotation+label
//     tracking the instance label names the Application and Argo CD's
//     tracking normalization backfills the annotation (Synced).
//   - M2: a server-side apply by another field manager (helm) of a few
//     fields of the client-side-synced object.
//   - W3: a live-only annotation and a kubectl edit of another field
//     (annotation+label tracking): Argo CD's diff shows only the edit.
func ownerGroups() []argoGroup {
	type driftFunc = func(t *testing.T, k func(...string) string, edit func(string, ...string), ns string)
	applyFile := func(body string, args ...string) driftFunc {
		return func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			f := filepath.Join(t.TempDir(), "apply.yaml")
			if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			k(append(append([]string{"apply"}, args...), "-f", f)...)
		}
	}
	// csaApply is M1: the Git manifest, one value changed, applied client-side.
	csaApply := applyFile(strings.Replace(appConfig, "color: blue", "color: red", 1))
	// ssaOther is M2: a few fields applied server-side by another manager.
	ssaOther := applyFile("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {rotated: \"yes\"}\n",
		"--server-side", "--force-conflicts", "--field-manager=helm")
	unAnnotate := func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
		k("annotate", "configmap/settings", "argocd.argoproj.io/tracking-id-")
	}
	unLabel := func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
		k("label", "configmap/settings", "app.kubernetes.io/instance-")
	}
	liveOnlyAndEdit := func(t *testing.T, k func(...string) string, edit func(string, ...string), ns string) {
		k("annotate", "configmap/settings", "owner=alice", "--overwrite")
		edit("s/large/small/", "configmap/settings")
	}
	cm := func(method string) map[string]string {
		return map[string]string{"application.resourceTrackingMethod": method}
	}
	sc := func(name string, drift driftFunc) argoScenario {
		return argoScenario{name: name, manifests: appConfig, target: "configmap/settings", drift: drift}
	}
	return []argoGroup{
		{name: "owner-annotation", cm: cm("annotation"), scenarios: []argoScenario{
			sc("m1-csa-apply-drops-annotation", csaApply),
			sc("annotation-deleted", unAnnotate),
			sc("m2-ssa-other-manager", ssaOther),
		}},
		{name: "owner-label", cm: cm("label"), scenarios: []argoScenario{
			sc("m1-csa-apply-drops-label", csaApply),
			sc("label-deleted", unLabel),
		}},
		{name: "owner-annotation-label", cm: cm("annotation+label"), scenarios: []argoScenario{
			sc("m1-csa-apply-drops-both", csaApply),
			sc("annotation-deleted-label-kept", unAnnotate),
			sc("label-deleted-annotation-kept", unLabel),
			sc("w3-live-only-annotation-and-edit", liveOnlyAndEdit),
		}},
	}
}

// emptyDiffScenario is one "OutOfSync with an empty diff" (argo-cd issues
// #14666, #21434): Argo CD records the Secret OutOfSync while the diff its
// UI shows (the managed-resources API) is empty. explain -f must exit 1,
// name the field, and say which step of Argo CD's comparison differs
// between the status diff and the UI diff (a note with reason
// empty-ui-diff naming the step).
type emptyDiffScenario struct {
	name      string
	manifests string
	spec      string
	// synced, when set, is committed after the first sync and synced by
	// Argo CD (a second sync: server-side apply, with ServerSideApply=true).
	synced string
	// gitAfter is committed after the syncs, when set.
	gitAfter string
	drift    func(t *testing.T, k func(...string) string)
	// field is the JSON pointer explain must name; step a phrase its note
	// must hold.
	field, step string
	secret      []string
}

func emptyDiffScenarios() []emptyDiffScenario {
	// Values as the API server stores them (base64): dXNlcg== is "user",
	// b2xkLXRva2Vu "old-token".
	oneKey := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {user: dXNlcg==}\n"
	twoKeys := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {user: dXNlcg==, token: b2xkLXRva2Vu}\n"
	return []emptyDiffScenario{{
		// The first sync of a ServerSideApply=true Application creates the
		// Secret with a last-applied-configuration (seen with v3.2.11); a
		// key added later is server-side applied, so it is not in
		// last-applied, and removing it from Git again leaves the UI's
		// 3-way diff empty while the structured-merge diff drops it.
		name:      "ssa-secret-key-removed-from-git",
		manifests: oneKey,
		spec:      "  syncPolicy:\n    syncOptions: [ServerSideApply=true]\n",
		synced:    twoKeys,
		gitAfter:  oneKey,
		field:     "/data/token", step: "the diff strategy",
		secret: []string{"b2xkLXRva2Vu", "old-token"},
	}, {
		name:      "stringdata-managers-rule",
		manifests: "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: s3cr3t-git}\n",
		spec:      "  ignoreDifferences:\n  - {kind: Secret, managedFieldsManagers: [rotator]}\n",
		drift: func(t *testing.T, k func(...string) string) {
			// aHVudGVyMi1yb3RhdGVk is "hunter2-rotated".
			k("patch", "secret/creds", "--field-manager=rotator", "--type=merge", "-p", `{"data":{"password":"aHVudGVyMi1yb3RhdGVk"}}`)
		},
		field: "/data/password", step: "stringData",
		secret: []string{"s3cr3t-git", "czNjcjN0LWdpdA==", "hunter2-rotated", "aHVudGVyMi1yb3RhdGVk"},
	}}
}

// runEmptyDiffScenarios runs emptyDiffScenarios on the running Argo CD
// with the default argocd-cm.
func runEmptyDiffScenarios(t *testing.T, a *ArgoCD) {
	t.Run("empty-diff", func(t *testing.T) {
		a.SetConfigMap(t, "argocd-cm", map[string]string{})
		time.Sleep(2 * time.Second)
		for _, sc := range emptyDiffScenarios() {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				runEmptyDiffScenario(t, a, sc)
			})
		}
	})
}

func runEmptyDiffScenario(t *testing.T, a *ArgoCD, sc emptyDiffScenario) {
	ns := E.argoNamespace(t, a, sc.name)
	app := "c-" + ns
	dir := "apps/" + ns
	a.Commit(t, "add empty-diff/"+sc.name, map[string]string{dir + "/manifests.yaml": sc.manifests})
	spec := fmt.Sprintf("  project: default\n  source: {repoURL: %q, path: %s, targetRevision: HEAD}\n  destination: {server: https://kubernetes.default.svc, namespace: %s}\n",
		a.RepoURL, dir, ns) + sc.spec
	a.CreateApp(t, app, "", spec)
	t.Cleanup(func() {
		if os.Getenv("DRIFT_E2E_KEEP") == "" {
			_ = a.kubectlRaw("", "-n", a.Namespace, "delete", "application", app, "--wait=false")
		}
	})
	a.waitOperation(t, app, 90*time.Second)
	k := func(args ...string) string { return a.Kubectl(t, append([]string{"-n", ns}, args...)...) }
	if sc.synced != "" {
		a.Commit(t, "sync empty-diff/"+sc.name, map[string]string{dir + "/manifests.yaml": sc.synced})
		secondSync(t, a, app, func() bool { return k("get", "secret/creds", "-o", "jsonpath={.data.token}") != "" })
	}
	if sc.drift != nil {
		sc.drift(t, k)
	}
	desiredYAML := sc.manifests
	if sc.gitAfter != "" {
		desiredYAML = sc.gitAfter
		a.Commit(t, "change empty-diff/"+sc.name, map[string]string{dir + "/manifests.yaml": desiredYAML})
	}
	// Argo CD's two answers: the status OutOfSync, the UI diff empty. Its
	// sync status and status.resources are read in two calls; on a loaded
	// machine (a cold CI run, 2026-12-07) one run read the Application
	// OutOfSync and its status.resources Synced, so the state is read
	// again, up to three times, before the scenario is called not what it
	// is about. This checks Argo CD's state, not the tool's verdict.
	var st AppStatus
	var recorded string
	var modified bool
	var uiPaths []string
	for attempt := 1; ; attempt++ {
		var item *ManagedResource
		st, item = a.refreshedItem(t, app, "secret", "creds")
		var appObj struct {
			Status struct {
				Resources []struct{ Kind, Name, Status string } `json:"resources"`
			} `json:"status"`
		}
		DecodeJSON(t, a.Kubectl(t, "-n", a.Namespace, "get", "application", app, "-o", "json"), &appObj)
		recorded = ""
		for _, r := range appObj.Status.Resources {
			if r.Kind == "Secret" && r.Name == "creds" {
				recorded = r.Status
			}
		}
		modified, uiPaths = item.Modified, filterArgoPaths(diffPaths(item.PredictedLive, item.NormalizedLive, ""))
		if st.Sync.Status == "OutOfSync" && recorded == "OutOfSync" && !modified && len(uiPaths) == 0 || attempt == 3 {
			break
		}
		t.Logf("attempt %d: Application %s, status.resources %q, managed-resources modified=%v diff %v; reading again", attempt, st.Sync.Status, recorded, modified, uiPaths)
		time.Sleep(2 * time.Second)
	}
	if st.Sync.Status != "OutOfSync" || recorded != "OutOfSync" || modified || len(uiPaths) > 0 {
		t.Fatalf("Argo CD: Application %s, status.resources %q, managed-resources modified=%v diff %v: not the OutOfSync-with-empty-diff this scenario is about",
			st.Sync.Status, recorded, modified, uiPaths)
	}

	desired := filepath.Join(t.TempDir(), "desired.yaml")
	if err := os.WriteFile(desired, []byte(desiredYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, "explain", "secret/creds", "-n", ns, "--engine", "argocd",
		"--argocd-namespace", a.Namespace, "-o", "json", "-f", desired)
	for _, v := range sc.secret {
		if strings.Contains(res.Stdout, v) || strings.Contains(res.Stderr, v) {
			t.Errorf("explain printed a Secret value")
		}
	}
	if res.Code != 1 {
		t.Errorf("explain -f: exit %d, want 1 (Argo CD records the Secret OutOfSync)\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var rep model.Report
	DecodeJSON(t, res.Stdout, &rep)
	named := false
	for _, d := range rep.Drifts {
		if d.Path == sc.field {
			named = true
		}
	}
	if !named {
		t.Errorf("explain -f does not name %s: %s", sc.field, res.Stdout)
	}
	var note *model.Note
	for i, n := range rep.Notes {
		if n.Reason == "empty-ui-diff" {
			note = &rep.Notes[i]
		}
	}
	switch {
	case note == nil:
		t.Errorf("explain -f: no empty-ui-diff note: %+v", rep.Notes)
	case !strings.Contains(note.Message, sc.step) || !strings.Contains(note.Message, sc.field):
		t.Errorf("explain -f: the empty-ui-diff note does not name the step %q and the field %s: %s", sc.step, sc.field, note.Message)
	}
	t.Logf("%s: Argo CD %s with an empty UI diff; explain exit %d, note: %v", sc.name, recorded, res.Code, note)
}

// secondSync has Argo CD sync app once more (automated sync switched on
// until done() holds, then off again).
func secondSync(t *testing.T, a *ArgoCD, app string, done func() bool) {
	t.Helper()
	a.Kubectl(t, "-n", a.Namespace, "patch", "application", app, "--type=merge", "-p", `{"spec":{"syncPolicy":{"automated":{}}}}`)
	start := time.Now()
	for !done() {
		if time.Since(start) > 90*time.Second {
			t.Fatalf("Application %s: second sync not done after 90s; controller log:\n%s", app, a.LogTail("controller", 15))
		}
		a.RefreshHard(t, app)
		time.Sleep(time.Second)
	}
	a.Kubectl(t, "-n", a.Namespace, "patch", "application", app, "--type=merge", "-p", `{"spec":{"syncPolicy":{"automated":null}}}`)
	// The operation must end before the next commit (the patch above
	// stops new ones).
	a.waitOperation(t, app, 90*time.Second)
}
