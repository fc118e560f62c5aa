//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// The fleet harness (issue 18): the shared cluster is the hub (Argo CD's
// Applications, Flux's management cluster), and two more real API servers,
// each with its own etcd and ports, are the spokes. One kubeconfig has a
// context per cluster: hub, spoke-a, spoke-b. The spokes are started
// lazily, once per test binary, and stopped by TestMain (stopFleet).
//
// Ports: the shared cluster uses 16443/12379, the Flux lab 16453/12391,
// the Argo CD harness 16463/12401.

// fleetSpoke is one spoke API server.
type fleetSpoke struct {
	name, port, etcdPort string
	// env points hack/cluster.sh at the spoke (its own run dir, ports).
	env        []string
	kubeconfig string
	server     string
	token      string
}

// fleetHarness is the running fleet. Tests only read it.
type fleetHarness struct {
	// kubeconfig has the contexts hub, spoke-a and spoke-b.
	kubeconfig string
	hubServer  string
	spokes     map[string]*fleetSpoke
}

var (
	fleetOnce sync.Once
	theFleet  *fleetHarness
	fleetErr  error
	// fleetMu guards fleetStarted, the spokes TestMain's cleanup stops
	// (also those a test stopped and restarted).
	fleetMu      sync.Mutex
	fleetStarted []*fleetSpoke
)

func newSpoke(name, port, etcdPort string) *fleetSpoke {
	// Beside the lab's run dir in the tool cache, never sharing it.
	return &fleetSpoke{name: name, port: port, etcdPort: etcdPort, env: append(os.Environ(),
		"DRIFT_CLUSTER_DIR="+filepath.Join(toolCacheDir(), "cluster-"+name),
		"DRIFT_APISERVER_PORT="+port,
		"DRIFT_ETCD_PORT="+etcdPort,
	)}
}

// clusterDirOf is the DRIFT_CLUSTER_DIR of an environment (the last wins,
// as for exec).
func clusterDirOf(env []string) string {
	dir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "DRIFT_CLUSTER_DIR="); ok {
			dir = v
		}
	}
	return dir
}

// fleet returns the running fleet, starting the spokes on first use.
func fleet(t *testing.T) *fleetHarness {
	t.Helper()
	fleetOnce.Do(func() {
		theFleet, fleetErr = startFleet()
	})
	if fleetErr != nil {
		t.Fatalf("fleet harness: %v", fleetErr)
	}
	return theFleet
}

func startFleet() (*fleetHarness, error) {
	f := &fleetHarness{spokes: map[string]*fleetSpoke{}}
	for _, s := range []*fleetSpoke{newSpoke("spoke-a", "16473", "12411"), newSpoke("spoke-b", "16483", "12421")} {
		if err := s.start(); err != nil {
			return nil, err
		}
		f.spokes[s.name] = s
	}
	dir, err := os.MkdirTemp("", "drift-fleet-")
	if err != nil {
		return nil, err
	}
	f.kubeconfig = filepath.Join(dir, "kubeconfig")
	return f, f.writeKubeconfig()
}

// writeKubeconfig merges the clusters' admin kubeconfigs into one with a
// context per cluster (again after a spoke restarted: its token is new).
func (f *fleetHarness) writeKubeconfig() error {
	hub, err := clientcmd.LoadFromFile(E.Kubeconfig)
	if err != nil {
		return err
	}
	merged := clientcmdapi.NewConfig()
	add := func(name string, cfg *clientcmdapi.Config) error {
		c, ok := cfg.Contexts[cfg.CurrentContext]
		if !ok {
			return fmt.Errorf("kubeconfig for %s has no current context", name)
		}
		merged.Clusters[name] = cfg.Clusters[c.Cluster]
		merged.AuthInfos[name] = cfg.AuthInfos[c.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
		return nil
	}
	if err := add("hub", hub); err != nil {
		return err
	}
	f.hubServer = merged.Clusters["hub"].Server
	for _, s := range f.spokes {
		cfg, err := clientcmd.LoadFromFile(s.kubeconfig)
		if err != nil {
			return err
		}
		if err := add(s.name, cfg); err != nil {
			return err
		}
		s.server = merged.Clusters[s.name].Server
		s.token = merged.AuthInfos[s.name].Token
	}
	merged.CurrentContext = "hub"
	return clientcmd.WriteToFile(*merged, f.kubeconfig)
}

func (s *fleetSpoke) start() error {
	fleetMu.Lock()
	fleetStarted = append(fleetStarted, s)
	fleetMu.Unlock()
	start := exec.Command(filepath.Join(E.Root, "hack", "cluster.sh"), "start")
	start.Env = s.env
	start.Stdout, start.Stderr = os.Stderr, os.Stderr
	if err := start.Run(); err != nil {
		return fmt.Errorf("hack/cluster.sh start (%s API server on :%s): %w", s.name, s.port, err)
	}
	envCmd := exec.Command(filepath.Join(E.Root, "hack", "cluster.sh"), "env")
	envCmd.Env = s.env
	out, err := envCmd.Output()
	if err != nil {
		return fmt.Errorf("hack/cluster.sh env (%s): %w", s.name, err)
	}
	if s.kubeconfig = parseExports(string(out))["KUBECONFIG"]; s.kubeconfig == "" {
		return fmt.Errorf("hack/cluster.sh env (%s) printed no KUBECONFIG:\n%s", s.name, out)
	}
	return nil
}

func (s *fleetSpoke) stop() {
	stop := exec.Command(filepath.Join(E.Root, "hack", "cluster.sh"), "stop")
	stop.Env = s.env
	stop.Stdout, stop.Stderr = os.Stderr, os.Stderr
	_ = stop.Run()
}

// stopFleet stops the spokes (TestMain calls it after m.Run).
func stopFleet() {
	fleetMu.Lock()
	defer fleetMu.Unlock()
	seen := map[*fleetSpoke]bool{}
	for _, s := range fleetStarted {
		if !seen[s] {
			seen[s] = true
			s.stop()
		}
	}
	if theFleet != nil && os.Getenv("DRIFT_E2E_KEEP") == "" {
		_ = os.RemoveAll(filepath.Dir(theFleet.kubeconfig))
	}
}

// kubectl runs our kubectl in one context of the fleet.
func (f *fleetHarness) kubectl(t testing.TB, context string, opts RunOpts, args ...string) string {
	t.Helper()
	opts.Kubeconfig = f.kubeconfig
	return E.KubectlWith(t, opts, append([]string{"--context", context}, args...)...)
}

// apply applies a manifest in one context.
func (f *fleetHarness) apply(t testing.TB, context, manifest string, flags ...string) {
	t.Helper()
	f.kubectl(t, context, RunOpts{Stdin: []byte(manifest)}, append([]string{"apply", "-f", "-"}, flags...)...)
}

// drift runs kubectl-drift with the fleet kubeconfig.
func (f *fleetHarness) drift(t testing.TB, args ...string) Result {
	t.Helper()
	return E.Run(t, RunOpts{Kubeconfig: f.kubeconfig}, KubectlDrift, args...)
}

// namespace creates the same fresh namespace in each given context, deleted
// when the test ends.
func (f *fleetHarness) namespace(t testing.TB, contexts ...string) string {
	t.Helper()
	ns := uniqueName("fleet-", t.Name(), 58)
	for _, c := range contexts {
		f.kubectl(t, c, RunOpts{}, "create", "namespace", ns)
		t.Cleanup(func() {
			if os.Getenv("DRIFT_E2E_KEEP") == "" {
				E.Run(t, RunOpts{Kubeconfig: f.kubeconfig}, filepath.Join(E.KubeBinDir, "kubectl"), "--context", c, "delete", "namespace", ns, "--wait=false")
			}
		})
	}
	return ns
}

// explainIn runs explain -o json in a context and decodes the report.
func (f *fleetHarness) explainIn(t *testing.T, wantCode int, args ...string) model.Report {
	t.Helper()
	return explainWith(t, f.drift, wantCode, args...)
}

// explainAny is explainIn for runs whose exit code is not the point (an
// owner not found is exit 0, a verdict unknown exit 1): 0 or 1, not 2.
func (f *fleetHarness) explainAny(t *testing.T, args ...string) model.Report {
	t.Helper()
	res := f.drift(t, append([]string{"explain", "-o", "json"}, args...)...)
	if res.Code != 0 && res.Code != 1 {
		t.Fatalf("explain %s: exit %d, want 0 or 1\nstderr:\n%s", strings.Join(args, " "), res.Code, res.Stderr)
	}
	var r model.Report
	DecodeJSON(t, res.Stdout, &r)
	return r
}

// verdictKinds are a report's verdicts of one engine by field path.
func verdictKinds(r model.Report, eng model.Engine) map[string]model.VerdictKind {
	out := map[string]model.VerdictKind{}
	for _, d := range r.Drifts {
		for _, v := range d.Verdicts {
			if v.Engine == eng {
				out[d.FieldPath] = v.Kind
			}
		}
	}
	return out
}

// noteWith is the report's first note of reason, nil when none.
func noteWith(r model.Report, reason string) *model.Note {
	return firstWhere(r.Notes, func(n model.Note) bool { return n.Reason == reason })
}

// ownerOf is the report's first owner of engine eng, nil when none.
func ownerOf(r model.Report, eng model.Engine) *model.Owner {
	return firstWhere(r.Owners, func(o model.Owner) bool { return o.Engine == eng })
}

// firstWhere points at s's first element ok accepts, nil when none.
func firstWhere[T any](s []T, ok func(T) bool) *T {
	if i := slices.IndexFunc(s, ok); i >= 0 {
		return &s[i]
	}
	return nil
}

// argoDrift makes the drift of TestArgoCDVerdictsAndWhyNot on a web
// Deployment applied as argocd-controller (client-side apply, Argo CD's
// default), with kubectl in the given context.
func (f *fleetHarness) argoDrift(t *testing.T, context, ns, tracking string) string {
	t.Helper()
	manifest := argoWeb(ns, tracking)
	f.apply(t, context, manifest, "--field-manager=argocd-controller")
	f.kubectl(t, context, RunOpts{}, "-n", ns, "scale", "deployment/web", "--replicas=5")
	f.kubectl(t, context, RunOpts{}, "-n", ns, "set", "image", "deployment/web", "app=nginx:1.29")
	f.kubectl(t, context, RunOpts{Env: []string{"KUBE_EDITOR=sed -i s/busybox:1.36/busybox:1.37/"}}, "-n", ns, "edit", "deployment/web")
	f.kubectl(t, context, RunOpts{}, "-n", ns, "label", "deployment/web", "hotfix=true")
	return writeFile(t, "web-"+context+".yaml", manifest)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestFleetArgoHubSpoke: Applications and argocd-cm on the hub, one of
// them deploying to spoke-a through a cluster Secret (destination.name),
// the other to the hub itself. explain on the spoke with --engine-context
// hub names the hub's Application and gives the verdicts the same-cluster
// setup gives. The objects are written as argocd-controller with the exact
// tracking-id Argo CD writes (the real Argo CD harness runs on its own API
// server and cannot reach the spokes' kubeconfig here).
func TestFleetArgoHubSpoke(t *testing.T) {
	installApplicationCRD(t)
	f := fleet(t)
	ctrl := f.namespace(t, "hub")          // Argo CD's control plane on the hub
	ns := f.namespace(t, "hub", "spoke-a") // the workload: on spoke-a, and the reference on the hub
	spoke := f.spokes["spoke-a"]

	f.apply(t, "hub", argocdCM(ctrl, "")+fmt.Sprintf(`  resource.customizations.ignoreDifferences.apps_Deployment: |
    managedFieldsManagers:
    - kubectl-set
---
apiVersion: v1
kind: Secret
metadata:
  name: cluster-spoke-a
  namespace: %[1]s
  labels: {argocd.argoproj.io/secret-type: cluster}
data:
  name: %[2]s
  server: %[3]s
  config: %[4]s
---
apiVersion: v1
kind: Secret
metadata:
  name: cluster-retired
  namespace: %[1]s
  labels: {argocd.argoproj.io/secret-type: cluster}
data:
  name: %[5]s
  server: %[6]s
`, ctrl, b64("spoke-a"), b64(spoke.server), b64(`{"bearerToken":"`+spoke.token+`","tlsClientConfig":{"insecure":true}}`),
		b64("retired"), b64("https://10.255.255.1:6443")))
	app := func(name, dest string) string {
		return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: %s
spec:
  project: default
  source: {repoURL: https://example.com/shop.git, path: deploy}
  destination: {%s, namespace: %s}
  syncPolicy:
    automated: {selfHeal: true}
  ignoreDifferences:
  - group: apps
    kind: Deployment
    jsonPointers: [/spec/replicas]
`, name, ctrl, dest, ns)
	}
	f.apply(t, "hub", app("shop", "name: spoke-a")+"---\n"+app("shop-here", "server: https://kubernetes.default.svc"))

	desiredSpoke := f.argoDrift(t, "spoke-a", ns, "shop:apps/Deployment:"+ns+"/web")
	desiredHub := f.argoDrift(t, "hub", ns, "shop-here:apps/Deployment:"+ns+"/web")

	ref := f.explainIn(t, 1, "--context", "hub", "deploy/web", "-n", ns, "-f", desiredHub, "--engine", "argocd", "--argocd-namespace", ctrl)
	got := f.explainIn(t, 1, "--context", "spoke-a", "deploy/web", "-n", ns, "-f", desiredSpoke, "--engine", "argocd", "--argocd-namespace", ctrl, "--engine-context", "hub")

	if o := ownerOf(got, model.Engine("argocd")); o == nil || o.Namespace != ctrl || o.Name != "shop" || !o.Found || !o.SelfHeal {
		t.Fatalf("owner on the spoke = %+v, want the hub's Application %s/shop, found, self-heal", o, ctrl)
	}
	want := verdictKinds(ref, model.Engine("argocd"))
	have := verdictKinds(got, model.Engine("argocd"))
	if len(want) < 4 {
		t.Fatalf("same-cluster reference has %d Argo CD verdicts, want the 4 drifted fields: %v", len(want), want)
	}
	for fp, k := range want {
		if have[fp] != k {
			t.Errorf("%s: verdict on the spoke %q, same-cluster %q", fp, have[fp], k)
		}
	}
	if len(have) != len(want) {
		t.Errorf("verdicts on the spoke %v, same-cluster %v", have, want)
	}
	if have[".spec.replicas"] != model.Ignored || have[".spec.template.spec.containers[name=app].image"] != model.Ignored ||
		have[".spec.template.spec.containers[name=sidecar].image"] != model.Reverted {
		t.Errorf("verdicts on the spoke = %v: want replicas and app image ignored (Application and hub argocd-cm rules), sidecar reverted (self-heal)", have)
	}
	if n := noteWith(got, "hub-application"); n == nil || !strings.Contains(n.Message, spoke.server) || !strings.Contains(n.Message, "cluster Secret "+ctrl+"/cluster-spoke-a") {
		t.Errorf("no note naming the destination's cluster Secret: %+v", got.Notes)
	}
	if n := noteWith(got, "cluster-secret-no-context"); n == nil || !strings.Contains(n.Message, "cluster-retired") {
		t.Errorf("no line for the cluster Secret whose server no context points at: %+v", got.Notes)
	}
	for _, n := range got.Notes {
		if strings.Contains(n.Message, spoke.token) {
			t.Fatalf("a note shows the cluster Secret's token: %s", n.Message)
		}
	}

	// Without --engine-context the spoke has no Application: the problem
	// the flag solves.
	alone := f.explainAny(t, "--context", "spoke-a", "deploy/web", "-n", ns, "-f", desiredSpoke, "--engine", "argocd", "--argocd-namespace", ctrl)
	if o := ownerOf(alone, model.Engine("argocd")); o != nil && o.Found {
		t.Errorf("on the spoke alone the Application was found: %+v", o)
	}

	// The hub's in-cluster Application explained against the spoke's
	// object is another cluster's: one clear line.
	f.kubectl(t, "spoke-a", RunOpts{}, "-n", ns, "annotate", "--overwrite", "deployment/web", "argocd.argoproj.io/tracking-id=shop-here:apps/Deployment:"+ns+"/web")
	wrong := f.explainAny(t, "--context", "spoke-a", "deploy/web", "-n", ns, "--engine", "argocd", "--argocd-namespace", ctrl, "--engine-context", "hub")
	if n := noteWith(wrong, "destination-mismatch"); n == nil || !strings.Contains(n.Message, "shop-here") || !strings.Contains(n.Message, "context spoke-a") {
		t.Errorf("no destination-mismatch line: %+v", wrong.Notes)
	}
}

// fluxWeb is webDeployment owned by Kustomization ns/name.
func fluxWeb(ns, ksNS, ksName string) string {
	return strings.NewReplacer(
		"kustomize.toolkit.fluxcd.io/name: apps", "kustomize.toolkit.fluxcd.io/name: "+ksName,
		"kustomize.toolkit.fluxcd.io/namespace: flux-system", "kustomize.toolkit.fluxcd.io/namespace: "+ksNS,
	).Replace(webDeployment(ns))
}

// TestFleetFluxRemote: a Kustomization on the management cluster (the hub)
// applies to spoke-b through spec.kubeConfig.secretRef. The objects are
// applied server-side as kustomize-controller with the labels it writes
// (not by a running kustomize-controller through the kubeconfig: said
// plainly). explain on spoke-b with --engine-context hub finds the owner,
// checks the kubeconfig Secret's server is spoke-b's, and gives the
// verdicts of the same-cluster setup.
func TestFleetFluxRemote(t *testing.T) {
	installFluxCRDsForCompare(t)
	f := fleet(t)
	mgmt := f.namespace(t, "hub")
	ns := f.namespace(t, "hub", "spoke-b")
	spoke := f.spokes["spoke-b"]
	kc, err := os.ReadFile(spoke.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ks := func(name, extra string) string {
		return fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: %s, namespace: %s}
spec:
  interval: 5m
  path: ./deploy
  prune: true
  sourceRef: {kind: GitRepository, name: repo}
%s`, name, mgmt, extra)
	}
	f.apply(t, "hub", fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: spoke-b-kubeconfig, namespace: %s}
data:
  value: %s
`, mgmt, b64(string(kc)))+"---\n"+ks("apps-remote", "  kubeConfig:\n    secretRef: {name: spoke-b-kubeconfig}\n")+"---\n"+ks("apps-here", ""))

	drift := func(context, ksName string) string {
		manifest := fluxWeb(ns, mgmt, ksName)
		f.apply(t, context, manifest, "--server-side", "--field-manager=kustomize-controller")
		f.kubectl(t, context, RunOpts{}, "-n", ns, "scale", "deployment/web", "--replicas=5")
		f.kubectl(t, context, RunOpts{}, "-n", ns, "label", "deployment/web", "hotfix=true")
		return writeFile(t, "web-flux-"+context+".yaml", manifest)
	}
	desiredSpoke := drift("spoke-b", "apps-remote")
	desiredHub := drift("hub", "apps-here")

	ref := f.explainIn(t, 1, "--context", "hub", "deploy/web", "-n", ns, "-f", desiredHub, "--engine", "flux")
	got := f.explainIn(t, 1, "--context", "spoke-b", "deploy/web", "-n", ns, "-f", desiredSpoke, "--engine", "flux", "--engine-context", "hub")
	if o := ownerOf(got, model.Engine("flux")); o == nil || o.Namespace != mgmt || o.Name != "apps-remote" || !o.Found {
		t.Fatalf("owner on spoke-b = %+v, want the hub's Kustomization %s/apps-remote, found", o, mgmt)
	}
	n := noteWith(got, "remote-owner")
	if n == nil || !strings.Contains(n.Message, spoke.server) || !strings.Contains(n.Message, "spec.kubeConfig.secretRef spoke-b-kubeconfig") {
		t.Errorf("no note tying the owner's kubeConfig to spoke-b: %+v", got.Notes)
	}
	for _, n := range got.Notes {
		if strings.Contains(n.Message, spoke.token) {
			t.Fatalf("a note shows the kubeconfig Secret's token: %s", n.Message)
		}
	}
	want, have := verdictKinds(ref, model.Engine("flux")), verdictKinds(got, model.Engine("flux"))
	if len(want) == 0 || fmt.Sprint(want) != fmt.Sprint(have) {
		t.Errorf("Flux verdicts on spoke-b %v, same-cluster %v", have, want)
	}

	// Without --engine-context the owner is not on spoke-b.
	alone := f.explainAny(t, "--context", "spoke-b", "deploy/web", "-n", ns, "-f", desiredSpoke, "--engine", "flux")
	if o := ownerOf(alone, model.Engine("flux")); o != nil && o.Found {
		t.Errorf("on spoke-b alone the Kustomization was found: %+v", o)
	}
	// A Kustomization without kubeConfig does not apply to spoke-b.
	f.kubectl(t, "spoke-b", RunOpts{}, "-n", ns, "label", "--overwrite", "deployment/web", "kustomize.toolkit.fluxcd.io/name=apps-here")
	local := f.explainAny(t, "--context", "spoke-b", "deploy/web", "-n", ns, "--engine", "flux", "--engine-context", "hub")
	if n := noteWith(local, "owner-not-remote"); n == nil || !strings.Contains(n.Message, "apps-here") {
		t.Errorf("no owner-not-remote line: %+v", local.Notes)
	}
}

// TestFleetScanContexts: one scan over hub, spoke-a and spoke-b returns
// every cluster's drift labelled with its cluster; with spoke-b's API
// server stopped, spoke-b is one warning and an unreachable sample and the
// rest is scanned (exit 1: drift found).
func TestFleetScanContexts(t *testing.T) {
	f := fleet(t)
	ns := f.namespace(t, "hub", "spoke-a", "spoke-b")
	for _, c := range []string{"hub", "spoke-a", "spoke-b"} {
		f.apply(t, c, fluxWeb(ns, "flux-system", "fleet-"+c), "--server-side", "--field-manager=kustomize-controller")
		f.kubectl(t, c, RunOpts{}, "-n", ns, "scale", "deployment/web", "--replicas=3")
	}
	res := f.drift(t, "scan", "-n", ns, "--contexts", "hub,spoke-a,spoke-b", "-o", "json")
	if res.Code != 1 {
		t.Fatalf("scan --contexts: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var doc struct {
		Kind     string
		Clusters []struct{ Name, Result string }
		Items    []struct {
			Cluster  string
			Resource model.ResourceID
			Owners   []model.Owner
		}
	}
	DecodeJSON(t, res.Stdout, &doc)
	seen := map[string]bool{}
	for _, it := range doc.Items {
		if it.Resource.Name == "web" && len(it.Owners) == 1 && it.Owners[0].Name == "fleet-"+it.Cluster {
			seen[it.Cluster] = true
		}
	}
	if len(seen) != 3 || len(doc.Clusters) != 3 {
		t.Fatalf("drifted web by cluster %v, clusters %+v; want all three, each labelled with its own cluster\n%s", seen, doc.Clusters, res.Stdout)
	}

	// spoke-b goes down; it is restarted for later tests.
	sb := f.spokes["spoke-b"]
	sb.stop()
	t.Cleanup(func() {
		if err := sb.start(); err != nil {
			t.Errorf("restarting spoke-b: %v", err)
		} else if err := f.writeKubeconfig(); err != nil {
			t.Errorf("kubeconfig after restarting spoke-b: %v", err)
		}
	})
	res = f.drift(t, "scan", "-n", ns, "--contexts", "hub,spoke-a,spoke-b", "-o", "prometheus")
	if res.Code != 1 {
		t.Fatalf("scan with spoke-b down: exit %d, want 1 (drift on the others)\nstderr:\n%s", res.Code, res.Stderr)
	}
	warnings := 0
	for _, l := range strings.Split(res.Stderr, "\n") {
		if strings.Contains(l, "cluster spoke-b not scanned") {
			warnings++
			if !strings.Contains(l, sb.server) {
				t.Errorf("warning does not name spoke-b's server: %s", l)
			}
		}
	}
	if warnings != 1 {
		t.Errorf("want one warning line for spoke-b, got %d:\n%s", warnings, res.Stderr)
	}
	for _, want := range []string{
		`kubectl_drift_scan_clusters{result="unreachable"} 1`,
		`kubectl_drift_scan_clusters{result="scanned"} 2`,
		`kubectl_drift_objects{cluster="hub",namespace="` + ns + `",kind="Deployment.apps",engine="flux"} 1`,
		`kubectl_drift_objects{cluster="spoke-a",namespace="` + ns + `",kind="Deployment.apps",engine="flux"} 1`,
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("metrics lack %s:\n%s", want, res.Stdout)
		}
	}
	if strings.Contains(res.Stdout, `cluster="spoke-b"`) {
		t.Errorf("the unreachable cluster has series:\n%s", res.Stdout)
	}
}

// TestFleetFluxRealRemote: a real kustomize-controller (the Flux lab's, on
// its own API server: the management cluster) applies a Kustomization to
// spoke-b through spec.kubeConfig.secretRef. Drift made on spoke-b with
// kubectl; explain on spoke-b with --engine-kubeconfig (the lab's) names
// the management cluster's Kustomization, and its verdict is what the
// controller then does.
func TestFleetFluxRealRemote(t *testing.T) {
	l := lab(t)
	f := fleet(t)
	mgmt := l.namespace(t, "remote")
	ns := f.namespace(t, "spoke-b")
	spoke := f.spokes["spoke-b"]
	// kustomize-controller refuses insecure-skip-tls-verify in a
	// kubeConfig (--insecure-kubeconfig-tls=false): trust the spoke's
	// self-signed serving certificate (kube-apiserver writes it with its CA
	// into --cert-dir) instead.
	cfg, err := clientcmd.LoadFromFile(spoke.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(clusterDirOf(spoke.env), "certs", "apiserver.crt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.InsecureSkipTLSVerify, c.CertificateAuthorityData = false, ca
	}
	kc, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.kubectl(t, RunOpts{Stdin: []byte(fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: spoke-b-kubeconfig, namespace: %s}
data:
  value: %s
`, mgmt, b64(string(kc))))}, "apply", "-f", "-")
	manifest := fluxWeb(ns, mgmt, "apps")
	rev := l.gitRepo(t, mgmt, map[string]string{"app.yaml": manifest})
	l.kustomization(t, mgmt, rev, "kubeConfig:\n  secretRef: {name: spoke-b-kubeconfig}")

	// The controller applied to spoke-b, as kustomize-controller.
	applied := f.kubectl(t, "spoke-b", RunOpts{}, "-n", ns, "get", "deployment", "web", "-o", "jsonpath={.metadata.managedFields[*].manager}")
	if !strings.Contains(applied, "kustomize-controller") {
		t.Fatalf("web on spoke-b not applied by kustomize-controller: managers %q", applied)
	}
	f.kubectl(t, "spoke-b", RunOpts{}, "-n", ns, "scale", "deployment/web", "--replicas=5")
	desired := writeFile(t, "web-remote.yaml", manifest)
	r := f.explainIn(t, 1, "--context", "spoke-b", "deploy/web", "-n", ns, "-f", desired, "--engine", "flux", "--engine-kubeconfig", l.kubeconfig)
	if o := ownerOf(r, model.Engine("flux")); o == nil || o.Namespace != mgmt || o.Name != "apps" || !o.Found {
		t.Fatalf("owner = %+v, want the management cluster's Kustomization %s/apps, found", o, mgmt)
	}
	if n := noteWith(r, "remote-owner"); n == nil || !strings.Contains(n.Message, spoke.server) {
		t.Errorf("no note tying the Kustomization's kubeConfig to spoke-b: %+v", r.Notes)
	}
	v := verdictKinds(r, model.Engine("flux"))[".spec.replicas"]
	if v != model.Reverted {
		t.Fatalf(".spec.replicas verdict %q, want reverted", v)
	}
	// Truth is what the controller does: reconcile, and the replicas on
	// spoke-b are the Git value again.
	l.reconcile(t, gvrKS, mgmt, "apps")
	if got := f.kubectl(t, "spoke-b", RunOpts{}, "-n", ns, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); got != "2" {
		t.Errorf("after the reconcile spoke-b has replicas %q; the verdict said reverted (2)", got)
	}
}
