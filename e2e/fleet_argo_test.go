//go:build e2e

package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// fleetArgoWeb is argoWeb named name, as it is in Git (no tracking id:
// Argo CD writes it).
func fleetArgoWeb(name, ns string) string {
	doc := deployWeb{Namespace: ns, Labels: "app: web", Replicas: 2, Image: "nginx:1.27", Sidecar: true}.YAML()
	return strings.NewReplacer("name: web", "name: "+name, "app: web", "app: "+name).Replace(doc)
}

// mergedKubeconfig writes a kubeconfig with one context per (name,
// kubeconfig file) pair, each the file's current context.
func mergedKubeconfig(t *testing.T, files map[string]string) string {
	t.Helper()
	merged := clientcmdapi.NewConfig()
	for name, file := range files {
		cfg, err := clientcmd.LoadFromFile(file)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := cfg.Contexts[cfg.CurrentContext]
		if !ok {
			t.Fatalf("kubeconfig %s has no current context", file)
		}
		merged.Clusters[name] = cfg.Clusters[c.Cluster]
		merged.AuthInfos[name] = cfg.AuthInfos[c.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	}
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*merged, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// scanReports decodes scan -o json: its reports by object name, and its
// warnings.
func scanReports(t *testing.T, res Result) (map[string]model.Report, []string) {
	t.Helper()
	var scanned struct {
		Items    []model.Report
		Warnings []string
	}
	DecodeJSON(t, res.Stdout, &scanned)
	byName := map[string]model.Report{}
	for _, it := range scanned.Items {
		byName[it.Resource.Name] = it
	}
	return byName, scanned.Warnings
}

// pauseController stops a's application controller, so that self-heal
// does not undo drift before it is explained, and returns what starts it
// again; the test's end starts it if nothing did.
func pauseController(t *testing.T, a *ArgoCD) (resume func()) {
	t.Helper()
	a.kill("controller")
	up := false
	t.Cleanup(func() {
		if !up {
			a.RestartController(t)
		}
	})
	return func() {
		t.Helper()
		a.RestartController(t)
		up = true
	}
}

// argoHubSpoke is the real Argo CD as a hub with spoke-a of the fleet
// harness registered as one of its clusters, a fresh namespace on both,
// and a kubeconfig with the contexts argo-hub and spoke-a.
type argoHubSpoke struct {
	a     *ArgoCD
	f     *fleetHarness
	spoke *fleetSpoke
	// ns is the namespace; cluster the spoke's name in Argo CD.
	ns, cluster, kubeconfig string
}

func newArgoHubSpoke(t *testing.T) *argoHubSpoke {
	t.Helper()
	hs := &argoHubSpoke{a: RealArgoCD(t), f: fleet(t)}
	hs.spoke = hs.f.spokes["spoke-a"]
	hs.ns = hs.f.namespace(t, "spoke-a")
	hs.a.Kubectl(t, "create", "namespace", hs.ns)
	t.Cleanup(func() {
		if os.Getenv("DRIFT_E2E_KEEP") == "" {
			_ = hs.a.kubectlRaw("", "delete", "namespace", hs.ns, "--wait=false")
		}
	})
	hs.kubeconfig = mergedKubeconfig(t, map[string]string{"argo-hub": hs.a.Kubeconfig, "spoke-a": hs.spoke.kubeconfig})
	hs.cluster = registerArgoSpoke(t, hs.a, hs.spoke)
	return hs
}

// registerArgoSpoke registers spoke with the real Argo CD as a cluster:
// the Secret util/db/cluster.go (SecretToCluster) reads: name, server, and
// config's bearerToken and tlsClientConfig.caData (the spoke's self-signed
// serving certificate). It returns the cluster's name (unique per call);
// the Secret is deleted when the test ends.
func registerArgoSpoke(t *testing.T, a *ArgoCD, spoke *fleetSpoke) string {
	t.Helper()
	var b [3]byte
	_, _ = rand.Read(b[:])
	clusterName := spoke.name + "-" + hex.EncodeToString(b[:])
	ca, err := os.ReadFile(filepath.Join(clusterDirOf(spoke.env), "certs", "apiserver.crt"))
	if err != nil {
		t.Fatal(err)
	}
	config, _ := json.Marshal(map[string]any{"bearerToken": spoke.token, "tlsClientConfig": map[string]any{"caData": ca}})
	a.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: cluster-%[2]s
  namespace: %[1]s
  labels: {argocd.argoproj.io/secret-type: cluster}
data:
  name: %[3]s
  server: %[4]s
  config: %[5]s
`, a.Namespace, clusterName, b64(clusterName), b64(spoke.server), b64(string(config))))
	t.Cleanup(func() {
		if os.Getenv("DRIFT_E2E_KEEP") == "" {
			_ = a.kubectlRaw("", "-n", a.Namespace, "delete", "secret", "cluster-"+clusterName, "--wait=false")
		}
	})
	return clusterName
}

// TestFleetArgoRealHubSpoke: the real Argo CD of the conformance harness
// is the hub; spoke-a of the fleet harness is registered with it as a
// cluster Secret (bearer token and the spoke's CA, as util/db/cluster.go
// reads them), and two Applications deploy to it by destination.name: one
// with automated self-heal, one automated without. The same two
// Applications deploy to the hub itself (in-cluster): the same-cluster
// setup. Each has an ignoreDifferences rule that matches (/spec/replicas)
// and one that looks as if it did but names the wrong group.
//
// With the controller stopped (so that self-heal does not undo the drift
// before it is explained), drift is made with kubectl on both clusters;
// explain on the spoke with --engine-context = the hub names the hub's
// Application and gives the same verdicts as explain on the hub's own
// objects. Then the controller runs again and is the truth: what
// self-heal puts back, and Argo CD's own diff (sync status, managed
// resources) of the Application without self-heal, agree with the
// verdicts. scan --engine-context on the spoke lists the spoke's drifted
// objects under the hub's Applications and reports an object whose
// tracking id names an Application deploying elsewhere as not owned.
func TestFleetArgoRealHubSpoke(t *testing.T) {
	hs := newArgoHubSpoke(t)
	a, f, spoke, ns, kc, clusterName := hs.a, hs.f, hs.spoke, hs.ns, hs.kubeconfig, hs.cluster
	run := func(args ...string) Result {
		t.Helper()
		return E.Run(t, RunOpts{Kubeconfig: kc}, KubectlDrift, args...)
	}

	dir := "apps/" + ns
	a.Commit(t, "fleet "+ns, map[string]string{
		dir + "/heal/web.yaml": fleetArgoWeb("web-heal", ns),
		dir + "/keep/web.yaml": fleetArgoWeb("web-keep", ns),
	})
	// app names: <role>-<where>-<suffix>; the suffix keeps them unique.
	suffix := ns[len(ns)-6:]
	appName := func(role, where string) string { return "fl-" + role + "-" + where + "-" + suffix }
	newApp := func(role, where, dest string, selfHeal bool) string {
		name := appName(role, where)
		spec := fmt.Sprintf(`  project: default
  source: {repoURL: %q, path: %s/%s, targetRevision: HEAD}
  destination: {%s, namespace: %s}
  syncPolicy:
    automated: {selfHeal: %v}
  ignoreDifferences:
  - group: apps
    kind: Deployment
    jsonPointers: [/spec/replicas]
  # Looks like the image rule it was meant to be, but Deployments are in
  # group apps, not extensions: it matches nothing.
  - group: extensions
    kind: Deployment
    jsonPointers: [/spec/template/spec/containers/0/image]
`, a.RepoURL, dir, role, dest, ns, selfHeal)
		a.CreateApp(t, name, "", spec)
		t.Cleanup(func() {
			if os.Getenv("DRIFT_E2E_KEEP") == "" {
				_ = a.kubectlRaw("", "-n", a.Namespace, "delete", "application", name, "--wait=false")
			}
		})
		return name
	}
	apps := map[string]string{} // role/where -> Application
	for _, where := range []string{"spoke", "here"} {
		dest := "name: " + clusterName
		if where == "here" {
			dest = "server: https://kubernetes.default.svc"
		}
		apps["heal/"+where] = newApp("heal", where, dest, true)
		apps["keep/"+where] = newApp("keep", where, dest, false)
	}
	for _, app := range apps {
		a.waitOperation(t, app, 120*time.Second)
		a.WaitSynced(t, app, 90*time.Second)
	}
	if got := f.kubectl(t, "spoke-a", RunOpts{}, "-n", ns, "get", "deployment", "web-heal", "-o", "jsonpath={.metadata.annotations.argocd\\.argoproj\\.io/tracking-id}"); !strings.HasPrefix(got, apps["heal/spoke"]+":") {
		t.Fatalf("web-heal on the spoke was not applied by the hub's Argo CD: tracking id %q", got)
	}

	// The controller stops: the drift stays until it is explained.
	resume := pauseController(t, a)
	stopped := time.Now()
	time.Sleep(1100 * time.Millisecond) // a sync started from now on has a later startedAt (1 s resolution)

	// The same drift on both clusters, with kubectl.
	kubectlOn := map[string]func(opts RunOpts, args ...string) string{
		"spoke": func(opts RunOpts, args ...string) string { return f.kubectl(t, "spoke-a", opts, args...) },
		"here":  func(opts RunOpts, args ...string) string { return a.KubectlWith(t, opts, args...) },
	}
	for _, where := range []string{"spoke", "here"} {
		k := kubectlOn[where]
		for _, d := range []string{"web-heal", "web-keep"} {
			k(RunOpts{}, "-n", ns, "scale", "deployment/"+d, "--replicas=5")
			k(RunOpts{}, "-n", ns, "set", "image", "deployment/"+d, "app=nginx:1.29")
			k(RunOpts{Env: []string{"KUBE_EDITOR=sed -i s/busybox:1.36/busybox:1.37/"}}, "-n", ns, "edit", "deployment/"+d)
			k(RunOpts{}, "-n", ns, "label", "deployment/"+d, "hotfix=true")
			k(RunOpts{}, "-n", ns, "patch", "deployment/"+d, "--type=merge", "-p", `{"spec":{"minReadySeconds":7}}`)
		}
	}
	// An object on the spoke whose tracking id names the hub's in-cluster
	// Application: it is not that Application's (it deploys to the hub).
	stray := fmt.Sprintf("%s:/ConfigMap:%s/stray", apps["keep/here"], ns)
	f.apply(t, "spoke-a", fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stray\n  namespace: %s\n  annotations: {argocd.argoproj.io/tracking-id: %q}\ndata: {a: b}\n", ns, stray), "--field-manager=argocd-controller")
	f.kubectl(t, "spoke-a", RunOpts{}, "-n", ns, "label", "configmap/stray", "hotfix=true")

	desired := map[string]string{
		"web-heal": writeFile(t, "web-heal.yaml", fleetArgoWeb("web-heal", ns)),
		"web-keep": writeFile(t, "web-keep.yaml", fleetArgoWeb("web-keep", ns)),
	}
	// explain runs explain -o json on a Deployment, with its Git manifest
	// as -f unless extra starts with "--no-file".
	explain := func(kubeconfig, deploy string, extra ...string) (model.Report, Result) {
		t.Helper()
		args := []string{"explain", "deploy/" + deploy, "-n", ns, "--engine", "argocd", "--argocd-namespace", a.Namespace, "-o", "json"}
		if len(extra) > 0 && extra[0] == "--no-file" {
			extra = extra[1:]
		} else {
			args = append(args, "-f", desired[deploy])
		}
		args = append(args, extra...)
		res := E.Run(t, RunOpts{Kubeconfig: kubeconfig}, KubectlDrift, args...)
		if res.Code != 1 {
			t.Fatalf("explain %s: exit %d, want 1 (drift)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.Code, res.Stdout, res.Stderr)
		}
		var r model.Report
		DecodeJSON(t, res.Stdout, &r)
		return r, res
	}
	reports := map[string]model.Report{}
	for _, role := range []string{"heal", "keep"} {
		deploy := "web-" + role
		same, _ := explain(a.Kubeconfig, deploy)
		got, _ := explain(kc, deploy, "--context", "spoke-a", "--engine-context", "argo-hub")
		reports[role] = got
		o := ownerOf(got, model.Engine("argocd"))
		if o == nil || o.Namespace != a.Namespace || o.Name != apps[role+"/spoke"] || !o.Found || o.SelfHeal != (role == "heal") {
			t.Fatalf("%s: owner on the spoke = %+v, want the hub's Application %s/%s, found, self-heal %v", deploy, o, a.Namespace, apps[role+"/spoke"], role == "heal")
		}
		if n := noteWith(got, "hub-application"); n == nil || !strings.Contains(n.Message, spoke.server) || !strings.Contains(n.Message, "cluster-"+clusterName) {
			t.Errorf("%s: no note naming the destination's cluster Secret: %+v", deploy, got.Notes)
		}
		for _, n := range got.Notes {
			if strings.Contains(n.Message, spoke.token) {
				t.Fatalf("a note shows the cluster Secret's token: %s", n.Message)
			}
		}
		want, have := verdictKinds(same, model.Engine("argocd")), verdictKinds(got, model.Engine("argocd"))
		if len(want) < 4 || !reflect.DeepEqual(want, have) {
			t.Errorf("%s: verdicts on the spoke %v, same-cluster %v (want the same, for the drifted fields)", deploy, have, want)
		}
		t.Logf("%s on the spoke: %v", deploy, have)
	}
	if v := verdictKinds(reports["heal"], model.Engine("argocd")); v[".spec.template.spec.containers[name=app].image"] != model.Reverted || v[".spec.replicas"] != model.Ignored {
		t.Errorf("web-heal: %v, want the app image reverted (the extensions rule does not match) and replicas ignored", v)
	}
	if v := verdictKinds(reports["keep"], model.Engine("argocd")); v[".spec.template.spec.containers[name=app].image"] != model.Reported {
		t.Errorf("web-keep: %v, want the app image reported (no self-heal)", v)
	}

	// scan on the spoke, the engine's objects from the hub.
	// (scan reads Argo CD's default namespace, the harness's.)
	res := run("--context", "spoke-a", "scan", "-n", ns, "--engine", "argocd", "--engine-context", "argo-hub", "-o", "json")
	if res.Code != 1 {
		t.Fatalf("scan --engine-context: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	byName, warnings := scanReports(t, res)
	noFileReports := map[string]model.Report{}
	for _, role := range []string{"heal", "keep"} {
		it, ok := byName["web-"+role]
		if !ok {
			t.Errorf("scan does not list web-%s: %s", role, res.Stdout)
			continue
		}
		if o := ownerOf(it, model.Engine("argocd")); o == nil || o.Name != apps[role+"/spoke"] || !o.Found {
			t.Errorf("scan: web-%s owner %+v, want %s", role, o, apps[role+"/spoke"])
		}
		// scan has no desired file: it says what explain without -f says
		// on the spoke (the same pipeline, the hub's Application).
		noFile, _ := explain(kc, "web-"+role, "--no-file", "--context", "spoke-a", "--engine-context", "argo-hub")
		noFileReports[role] = noFile
		if want, have := verdictKinds(noFile, model.Engine("argocd")), verdictKinds(it, model.Engine("argocd")); len(want) == 0 || !reflect.DeepEqual(want, have) {
			t.Errorf("scan: web-%s verdicts %v, explain without -f %v", role, have, want)
		}
	}
	if it, ok := byName["stray"]; ok {
		t.Errorf("scan lists stray as owned by %+v: its Application deploys to the hub", it.Owners)
	}
	strayLine := 0
	for _, w := range warnings {
		if strings.Contains(w, apps["keep/here"]) && strings.Contains(w, "not owned") {
			strayLine++
		}
	}
	if strayLine != 1 {
		t.Errorf("scan: want one warning that objects naming %s are not owned by it, got %d: %q", apps["keep/here"], strayLine, warnings)
	}
	strayRes := run("--context", "spoke-a", "explain", "configmap/stray", "-n", ns, "--engine", "argocd", "--argocd-namespace", a.Namespace, "--engine-context", "argo-hub", "-o", "json")
	var strayRep model.Report
	DecodeJSON(t, strayRes.Stdout, &strayRep)
	if o := ownerOf(strayRep, model.Engine("argocd")); o != nil {
		t.Errorf("explain stray: owner %+v, want none (its Application deploys to the hub)", o)
	}
	if n := noteWith(strayRep, "destination-mismatch"); n == nil || !strings.Contains(n.Message, apps["keep/here"]) {
		t.Errorf("explain stray: no destination-mismatch line: %+v", strayRep.Notes)
	}

	// The truth: the controller runs again.
	var before map[string]any
	DecodeJSON(t, f.kubectl(t, "spoke-a", RunOpts{}, "-n", ns, "get", "deployment", "web-heal", "-o", "json"), &before)
	resume()
	tally := &conformanceTally{known: map[string]string{}, used: map[string]bool{}}

	// Self-heal: a sync of the heal Application started after the drift.
	// The controller compares an Application again at its resync period
	// (2-3 min) or when asked: ask now (a normal refresh, as the UI's
	// Refresh button), then it is the controller that decides to heal.
	healApp := apps["heal/spoke"]
	a.App(t, healApp, "normal")
	deadline := time.Now().Add(120 * time.Second)
	for {
		var obj struct {
			Status struct {
				OperationState struct {
					Phase     string    `json:"phase"`
					StartedAt time.Time `json:"startedAt"`
				} `json:"operationState"`
			} `json:"status"`
		}
		DecodeJSON(t, a.Kubectl(t, "-n", a.Namespace, "get", "application", healApp, "-o", "json"), &obj)
		st := obj.Status.OperationState
		if st.Phase == "Succeeded" && st.StartedAt.After(stopped.Truncate(time.Second)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no self-heal of %s after the controller restarted (operation %+v)\n%s", healApp, st, a.LogTail("controller", 20))
		}
		time.Sleep(500 * time.Millisecond)
	}
	var after map[string]any
	DecodeJSON(t, f.kubectl(t, "spoke-a", RunOpts{}, "-n", ns, "get", "deployment", "web-heal", "-o", "json"), &after)
	tally.selfHeal(t, "spoke/heal", "", reports["heal"], before, after)
	// Without the Git manifest (scan, explain without -f) the desired
	// state is inferred from managedFields; say where that inference and
	// self-heal part (not a failure: the verdicts above are with -f).
	for _, d := range noFileReports["heal"].Drifts {
		toolOut, v := toolSaysOutOfSync(d)
		if v != nil && v.Kind == model.Ignored && strings.Contains(v.Reason, argocd.SyncReappliesPhrase) {
			toolOut = true
		}
		was, wasOK := jsonpointer.Get(before, d.Path)
		now, nowOK := jsonpointer.Get(after, d.Path)
		if putBack := wasOK != nowOK || !jsonSame(was, now); v != nil && putBack != toolOut {
			t.Logf("without -f: %s is %s, and self-heal %s", d.Path, v.Kind, map[bool]string{true: "put it back", false: "kept it"}[putBack])
		}
	}

	// No self-heal: Argo CD's own comparison of the spoke's object.
	keepApp := apps["keep/spoke"]
	st, item := a.refreshedItem(t, keepApp, "Deployment", "web-keep")
	if st.Sync.Status != "OutOfSync" || !item.Modified {
		t.Errorf("Argo CD: %s is %s, web-keep modified=%v; the tool said drift (exit 1)", keepApp, st.Sync.Status, item.Modified)
	}
	tally.object(t, "spoke/keep", "", item.Modified, true, reports["keep"])
	tally.fields(t, "spoke/keep", "", filterArgoPaths(diffPaths(item.PredictedLive, item.NormalizedLive, "")), reports["keep"])
	if got := f.kubectl(t, "spoke-a", RunOpts{}, "-n", ns, "get", "deployment", "web-keep", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != "nginx:1.29" {
		t.Errorf("web-keep (no self-heal) image is %q after the controller ran; the tool said reported, not reverted", got)
	}

	// The hub as the Argo CD API (as `argocd drift` after `argocd login`):
	// Argo CD's own diff of the spoke's object gives the same answer.
	apiRep, apiRes := explain(kc, "web-keep", "--context", "spoke-a", "--engine-context", "argo-hub", "--argocd-server", a.Server, "--argocd-plaintext")
	if n := noteWith(apiRep, "argocd-api"); n == nil {
		t.Errorf("with --argocd-server no note on Argo CD's own diff: %+v\n%s", apiRep.Notes, apiRes.Stderr)
	}
	tally.api(t, "spoke/keep", item.Modified, apiRes.Code == 1)
	t.Logf("truth: %d/%d fields agree with Argo CD's diff, %d/%d with self-heal, %d/%d objects, %d/%d through the API",
		tally.agree["field"], tally.total["field"], tally.agree["selfheal"], tally.total["selfheal"], tally.agree["object"], tally.total["object"], tally.agree["api"], tally.total["api"])
}

// TestFleetArgoDestinationMismatchAuto: an Application of the real Argo CD
// (the hub) deploys a ConfigMap to spoke-a with automated self-heal; the
// hub holds an object of the same name carrying the Application's
// tracking id, edited with kubectl. Argo CD compares an Application with
// the objects of its destination cluster only, so nothing reconciles the
// hub's object: explain on the hub with --engine auto (the default
// selection, where an engine that owns nothing is quiet) keeps the
// destination-mismatch note about the object, and the exit code is the
// report's. Then the controller is the truth: after the same edit on the
// spoke's copy, a reconcile of the Application (status.reconciledAt
// moves) heals the spoke's copy and leaves the hub's object edited.
func TestFleetArgoDestinationMismatchAuto(t *testing.T) {
	hs := newArgoHubSpoke(t)
	a, f, spoke, ns, kc, clusterName := hs.a, hs.f, hs.spoke, hs.ns, hs.kubeconfig, hs.cluster

	app := "dm-" + ns[len(ns)-6:]
	settings := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: %s\ndata:\n  level: info\n", ns)
	a.Commit(t, "destination mismatch "+ns, map[string]string{"apps/" + ns + "/dm/settings.yaml": settings})
	a.CreateApp(t, app, "", fmt.Sprintf(`  project: default
  source: {repoURL: %q, path: apps/%s/dm, targetRevision: HEAD}
  destination: {name: %s, namespace: %s}
  syncPolicy:
    automated: {selfHeal: true}
`, a.RepoURL, ns, clusterName, ns))
	t.Cleanup(func() {
		if os.Getenv("DRIFT_E2E_KEEP") == "" {
			_ = a.kubectlRaw("", "-n", a.Namespace, "delete", "application", app, "--wait=false")
		}
	})
	a.waitOperation(t, app, 120*time.Second)
	a.WaitSynced(t, app, 90*time.Second)
	level := func(kubectl func(RunOpts, ...string) string) string {
		return kubectl(RunOpts{}, "-n", ns, "get", "configmap", "settings", "-o", "jsonpath={.data.level}")
	}
	onSpoke := func(opts RunOpts, args ...string) string { return f.kubectl(t, "spoke-a", opts, args...) }
	onHub := func(opts RunOpts, args ...string) string { return a.KubectlWith(t, opts, args...) }
	if got := onSpoke(RunOpts{}, "-n", ns, "get", "configmap", "settings", "-o", "jsonpath={.metadata.annotations.argocd\\.argoproj\\.io/tracking-id}"); !strings.HasPrefix(got, app+":") {
		t.Fatalf("settings on the spoke was not applied by the hub's Argo CD: tracking id %q", got)
	}

	// The hub's object: Git's manifest with the Application's tracking id,
	// applied as Argo CD applies (client-side, argocd-controller), then
	// edited with kubectl.
	edited := time.Now()
	tracking := fmt.Sprintf("%s:/ConfigMap:%s/settings", app, ns)
	a.Apply(t, strings.Replace(settings, "  namespace: "+ns+"\n",
		fmt.Sprintf("  namespace: %s\n  annotations: {argocd.argoproj.io/tracking-id: %q}\n", ns, tracking), 1), "--field-manager=argocd-controller")
	editor := RunOpts{Env: []string{"KUBE_EDITOR=sed -i s/level:.info/level:\\ debug/"}}
	onHub(editor, "-n", ns, "edit", "configmap/settings")
	if got := level(onHub); got != "debug" {
		t.Fatalf("hub's settings after kubectl edit: level %q", got)
	}

	args := []string{"--context", "argo-hub", "explain", "configmap/settings", "-n", ns, "--engine", "auto",
		"--engine-context", "argo-hub", "--argocd-namespace", a.Namespace}
	res := E.Run(t, RunOpts{Kubeconfig: kc}, KubectlDrift, append(args, "-o", "json")...)
	var rep model.Report
	DecodeJSON(t, res.Stdout, &rep)
	n := noteWith(rep, "destination-mismatch")
	if n == nil || !strings.Contains(n.Message, a.Namespace+"/"+app) || !strings.Contains(n.Message, spoke.server) {
		t.Fatalf("explain --engine auto: no destination-mismatch note naming %s/%s and %s: %+v\nstderr:\n%s", a.Namespace, app, spoke.server, rep.Notes, res.Stderr)
	}
	if o := ownerOf(rep, model.Engine("argocd")); o != nil {
		t.Errorf("explain: owner %+v, want none (its Application deploys to spoke-a)", o)
	}
	// No engine owns the object: the exit code is the report's own
	// (model.Report.ExitCode): 1, kubectl's edit of data.level is a drift
	// that no engine judges, hence one that acts.
	if res.Code != rep.ExitCode() || res.Code != 1 {
		t.Errorf("explain: exit %d, report's exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", res.Code, rep.ExitCode(), res.Stdout, res.Stderr)
	}
	// Without --engine-context Argo CD runs on the cluster read: the
	// destination is matched with the kubeconfig's server, and says the
	// same (TestFleetArgoDestinationLocal shows more).
	alone := E.Run(t, RunOpts{Kubeconfig: kc}, KubectlDrift, "--context", "argo-hub", "explain", "configmap/settings", "-n", ns, "--argocd-namespace", a.Namespace, "-o", "json")
	var aloneRep model.Report
	DecodeJSON(t, alone.Stdout, &aloneRep)
	if o := ownerOf(aloneRep, model.Engine("argocd")); o != nil || noteWith(aloneRep, "destination-mismatch") == nil {
		t.Errorf("without --engine-context: exit %d, owner %+v, verdicts %v, notes %+v: want no owner and a destination-mismatch note",
			alone.Code, o, verdictKinds(aloneRep, model.Engine("argocd")), aloneRep.Notes)
	}
	text := E.Run(t, RunOpts{Kubeconfig: kc}, KubectlDrift, args...)
	if !strings.Contains(text.Stdout+text.Stderr, n.Message) || text.Code != res.Code {
		t.Errorf("explain (text): exit %d, the note %q not printed:\nstdout:\n%s\nstderr:\n%s", text.Code, n.Message, text.Stdout, text.Stderr)
	}

	// The truth. The same edit on the spoke's copy; self-heal puts it back
	// in a reconcile that starts after both edits, and that reconcile
	// leaves the hub's object as it is.
	var before struct {
		Status struct {
			ReconciledAt time.Time `json:"reconciledAt"`
		} `json:"status"`
	}
	DecodeJSON(t, a.Kubectl(t, "-n", a.Namespace, "get", "application", app, "-o", "json"), &before)
	time.Sleep(1100 * time.Millisecond) // reconciledAt has 1 s resolution
	onSpoke(editor, "-n", ns, "edit", "configmap/settings")
	spokeEdited := time.Now()
	a.App(t, app, "normal")
	deadline := time.Now().Add(90 * time.Second)
	for {
		var now struct {
			Status struct {
				ReconciledAt time.Time `json:"reconciledAt"`
			} `json:"status"`
		}
		DecodeJSON(t, a.Kubectl(t, "-n", a.Namespace, "get", "application", app, "-o", "json"), &now)
		at := now.Status.ReconciledAt
		if at.After(before.Status.ReconciledAt) && !at.Before(spokeEdited.Truncate(time.Second)) && level(onSpoke) == "info" {
			t.Logf("reconciled at %s (was %s; hub edited %s, spoke %s): the spoke's copy healed", at.Format(time.RFC3339),
				before.Status.ReconciledAt.Format(time.RFC3339), edited.Format(time.RFC3339), spokeEdited.Format(time.RFC3339))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconcile of %s that healed the spoke's copy (reconciledAt %s, spoke level %q)\n%s", app, at, level(onSpoke), a.LogTail("controller", 20))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if got := level(onHub); got != "debug" {
		t.Errorf("the controller changed the hub's object (level %q): it is its Application's after all, and the note is wrong", got)
	}
	if st := a.App(t, app, ""); st.Sync.Status != "Synced" {
		t.Errorf("Application %s is %s after the heal: the hub's object counts for it", app, st.Sync.Status)
	}
}

// TestFleetArgoDestinationLocal: explain and scan WITHOUT --engine-context
// on the cluster where the real Argo CD runs (the hub). Application "spoke"
// deploys a ConfigMap to spoke-a (registered as a cluster Secret); the hub
// keeps a leftover copy of it carrying the Application's tracking id, as
// when a destination moves from in-cluster to a spoke. Application "here"
// deploys to the hub itself (https://kubernetes.default.svc). Both self-heal.
// With the controller stopped, kubectl patch edits the leftover copy, the
// spoke's copy and the in-cluster object. explain and scan on the hub
// must not say self-heal reverts the leftover copy (the destination is
// matched with the kubeconfig's server, not the hub's Argo CD's in-cluster
// one: a destination-mismatch note instead), and must still say it of the
// in-cluster object. Then the controller is the truth: restarted and hard
// refreshed, it heals the spoke's copy and the in-cluster object and
// leaves the hub's leftover copy as kubectl left it.
func TestFleetArgoDestinationLocal(t *testing.T) {
	hs := newArgoHubSpoke(t)
	a, f, spoke, ns, kc, clusterName := hs.a, hs.f, hs.spoke, hs.ns, hs.kubeconfig, hs.cluster

	suffix := ns[len(ns)-6:]
	spokeApp, hereApp := "ld-spoke-"+suffix, "ld-here-"+suffix
	cm := func(name string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  level: info\n", name, ns)
	}
	a.Commit(t, "destination local "+ns, map[string]string{
		"apps/" + ns + "/spoke/settings.yaml": cm("settings"),
		"apps/" + ns + "/here/local.yaml":     cm("local-settings"),
	})
	for app, dest := range map[string]string{spokeApp: "name: " + clusterName, hereApp: "server: https://kubernetes.default.svc"} {
		dir := "spoke"
		if app == hereApp {
			dir = "here"
		}
		a.CreateApp(t, app, "", fmt.Sprintf(`  project: default
  source: {repoURL: %q, path: apps/%s/%s, targetRevision: HEAD}
  destination: {%s, namespace: %s}
  syncPolicy:
    automated: {selfHeal: true}
`, a.RepoURL, ns, dir, dest, ns))
		t.Cleanup(func() {
			if os.Getenv("DRIFT_E2E_KEEP") == "" {
				_ = a.kubectlRaw("", "-n", a.Namespace, "delete", "application", app, "--wait=false")
			}
		})
	}
	for _, app := range []string{spokeApp, hereApp} {
		a.waitOperation(t, app, 120*time.Second)
		a.WaitSynced(t, app, 90*time.Second)
	}
	onSpoke := func(args ...string) string { return f.kubectl(t, "spoke-a", RunOpts{}, args...) }
	onHub := func(args ...string) string { return a.Kubectl(t, args...) }
	level := func(kubectl func(...string) string, name string) string {
		return kubectl("-n", ns, "get", "configmap", name, "-o", "jsonpath={.data.level}")
	}
	if got := onSpoke("-n", ns, "get", "configmap", "settings", "-o", "jsonpath={.metadata.annotations.argocd\\.argoproj\\.io/tracking-id}"); !strings.HasPrefix(got, spokeApp+":") {
		t.Fatalf("settings on the spoke was not applied by the hub's Argo CD: tracking id %q", got)
	}

	// The controller stops: the edits stay until they are explained.
	resume := pauseController(t, a)
	// The hub's leftover copy: Git's manifest with the Application's
	// tracking id, applied as Argo CD applied it (client-side, as
	// argocd-controller) before the destination moved.
	tracking := fmt.Sprintf("%s:/ConfigMap:%s/settings", spokeApp, ns)
	a.Apply(t, strings.Replace(cm("settings"), "  namespace: "+ns+"\n",
		fmt.Sprintf("  namespace: %s\n  annotations: {argocd.argoproj.io/tracking-id: %q}\n", ns, tracking), 1), "--field-manager=argocd-controller")
	patch := []string{"--type=merge", "-p", `{"data":{"level":"debug"}}`}
	onHub(append([]string{"-n", ns, "patch", "configmap", "settings"}, patch...)...)
	onHub(append([]string{"-n", ns, "patch", "configmap", "local-settings"}, patch...)...)
	onSpoke(append([]string{"-n", ns, "patch", "configmap", "settings"}, patch...)...)

	explain := func(name string, extra ...string) (model.Report, Result) {
		t.Helper()
		args := append([]string{"--context", "argo-hub", "explain", "configmap/" + name, "-n", ns, "--argocd-namespace", a.Namespace}, extra...)
		res := E.Run(t, RunOpts{Kubeconfig: kc}, KubectlDrift, append(args, "-o", "json")...)
		var rep model.Report
		DecodeJSON(t, res.Stdout, &rep)
		return rep, res
	}
	selfHealed := func(r model.Report) bool {
		for _, d := range r.Drifts {
			for _, v := range d.Verdicts {
				if v.Engine == model.Engine("argocd") && v.Kind == model.Reverted {
					return true
				}
			}
		}
		return false
	}
	for _, engineFlag := range []string{"auto", "argocd"} {
		rep, res := explain("settings", "--engine", engineFlag)
		if selfHealed(rep) || ownerOf(rep, model.Engine("argocd")) != nil {
			t.Errorf("explain --engine %s of the hub's leftover copy: owner %+v, verdicts %v: says Argo CD reverts it\nstderr:\n%s",
				engineFlag, ownerOf(rep, model.Engine("argocd")), verdictKinds(rep, model.Engine("argocd")), res.Stderr)
		}
		n := noteWith(rep, "destination-mismatch")
		if n == nil || !strings.Contains(n.Message, a.Namespace+"/"+spokeApp) || !strings.Contains(n.Message, spoke.server) || !strings.Contains(n.Message, "cluster-"+clusterName) {
			t.Errorf("explain --engine %s: no destination-mismatch note naming %s, %s and its cluster Secret: %+v", engineFlag, spokeApp, spoke.server, rep.Notes)
		}
		if noteWith(rep, "tracking-mismatch") != nil {
			t.Errorf("explain --engine %s: a tracking-mismatch note on a tracking id that names its object: %+v", engineFlag, rep.Notes)
		}
		t.Logf("explain --engine %s of the leftover copy: exit %d, verdicts %v", engineFlag, res.Code, verdictKinds(rep, model.Engine("argocd")))
	}
	// -o wide: text with each note on one line.
	text := E.Run(t, RunOpts{Kubeconfig: kc}, KubectlDrift, "--context", "argo-hub", "explain", "configmap/settings", "-n", ns, "--argocd-namespace", a.Namespace, "-o", "wide")
	if strings.Contains(text.Stdout, "selfHeal") || !strings.Contains(text.Stdout+text.Stderr, "not to this cluster") {
		t.Errorf("explain (text) of the leftover copy:\nstdout:\n%s\nstderr:\n%s", text.Stdout, text.Stderr)
	}
	// The negative case: an in-cluster Application's object is its.
	here, hereRes := explain("local-settings")
	if o := ownerOf(here, model.Engine("argocd")); o == nil || o.Name != hereApp || !o.SelfHeal {
		t.Errorf("explain local-settings: owner %+v, want %s with self-heal\nstderr:\n%s", o, hereApp, hereRes.Stderr)
	}
	if v := verdictKinds(here, model.Engine("argocd")); v[".data.level"] != model.Reverted || noteWith(here, "destination-mismatch") != nil || noteWith(here, "destination-unresolved") != nil {
		t.Errorf("explain local-settings: verdicts %v, notes %+v: want .data.level reverted by self-heal, no destination note", v, here.Notes)
	}

	// scan on the hub says the same (one pipeline).
	res := E.Run(t, RunOpts{Kubeconfig: kc}, KubectlDrift, "--context", "argo-hub", "scan", "-n", ns, "-o", "json")
	byName, warnings := scanReports(t, res)
	if it, ok := byName["settings"]; ok && (selfHealed(it) || ownerOf(it, model.Engine("argocd")) != nil) {
		t.Errorf("scan: the leftover copy is %s's, verdicts %v", spokeApp, verdictKinds(it, model.Engine("argocd")))
	}
	if it, ok := byName["local-settings"]; !ok || verdictKinds(it, model.Engine("argocd"))[".data.level"] != model.Reverted {
		t.Errorf("scan: local-settings %+v, want .data.level reverted by self-heal\n%s", it.Drifts, res.Stdout)
	}
	lines := 0
	for _, w := range warnings {
		if strings.Contains(w, a.Namespace+"/"+spokeApp) && strings.Contains(w, "not counted as its") {
			lines++
		}
	}
	if lines != 1 {
		t.Errorf("scan: want one warning that the object naming %s is not its, got %d: %q", spokeApp, lines, warnings)
	}

	// The truth: the controller runs again and is asked for a hard refresh
	// of both Applications (it compares one on its own only at its next
	// resync, 2 min + jitter); its self-heal puts back the spoke's copy
	// and the in-cluster object.
	resume()
	a.RefreshHard(t, spokeApp)
	a.RefreshHard(t, hereApp)
	deadline := time.Now().Add(120 * time.Second)
	for level(onSpoke, "settings") != "info" || level(onHub, "local-settings") != "info" {
		if time.Now().After(deadline) {
			t.Fatalf("self-heal did not put back the spoke's copy (level %q) and the in-cluster object (level %q)\n%s",
				level(onSpoke, "settings"), level(onHub, "local-settings"), a.LogTail("controller", 20))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if st := a.RefreshHard(t, spokeApp); st.Sync.Status != "Synced" {
		t.Errorf("Application %s is %s after the heal: the hub's copy counts for it", spokeApp, st.Sync.Status)
	}
	if got := level(onHub, "settings"); got != "debug" {
		t.Errorf("the controller changed the hub's leftover copy (level %q): it is %s's after all, and the verdict is wrong", got, spokeApp)
	}
}
