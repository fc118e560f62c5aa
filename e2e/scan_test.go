//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	prommodel "github.com/prometheus/common/model"
)

// scanResult is the part of `scan -o json` the tests read.
type scanResult struct {
	Kind  string `json:"kind"`
	Stats struct {
		Kinds, KindsSkipped, Objects, Owned, Drifted, Fields int
	} `json:"stats"`
	Summary []struct {
		Namespace, Kind, Manager, Class, Engine string
		Objects, Fields                         int
	} `json:"summary"`
	Items []struct {
		Resource struct{ Kind, Namespace, Name string } `json:"resource"`
		Owners   []struct{ Engine, Kind, Name string }  `json:"owners"`
		Drifts   []struct {
			Path     string                     `json:"path"`
			Cause    string                     `json:"cause"`
			Live     any                        `json:"live"`
			Managers []struct{ Manager string } `json:"managers"`
		} `json:"drifts"`
	} `json:"items"`
	Warnings []string `json:"warnings"`
}

// lines flattens drift to "Kind name path cause engine".
func (r scanResult) lines() []string {
	var out []string
	for _, it := range r.Items {
		eng := ""
		for _, o := range it.Owners {
			eng += o.Engine
		}
		for _, d := range it.Drifts {
			out = append(out, fmt.Sprintf("%s %s %s %s %s", it.Resource.Kind, it.Resource.Name, d.Path, d.Cause, eng))
		}
	}
	sort.Strings(out)
	return out
}

const fluxLabels = `kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system`

func scanDeployment(ns, name, labels, annotations string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: %s, labels: {%s}, annotations: {%s}}
spec:
  replicas: 2
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers:
      - {name: app, image: "registry.example.com/%s:1.0"}
      - {name: proxy, image: "registry.example.com/proxy:2.3"}
---
`, name, ns, labels, annotations, name, name, name)
}

func scanConfigMap(ns, name, labels, annotations string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: %s, namespace: %s, labels: {%s}, annotations: {%s}}
data: {LOG_LEVEL: info, REGION: eu-west-1}
---
`, name, ns, labels, annotations)
}

func argoTracking(ns, group, kind, name string) string {
	return fmt.Sprintf(`argocd.argoproj.io/tracking-id: "shop:%s/%s:%s/%s"`, group, kind, ns, name)
}

// scanFixture builds a namespace with clean and drifted objects of both
// engines, drift made by real kubectl commands, and returns it with the
// drift the scan must find.
func scanFixture(t *testing.T) (string, []string) {
	t.Helper()
	ns := E.Namespace(t, "scan")
	E.Apply(t,
		scanDeployment(ns, "flux-scaled", fluxLabels, "")+
			scanDeployment(ns, "flux-clean", fluxLabels, "")+
			scanConfigMap(ns, "flux-labelled", fluxLabels, "")+
			scanConfigMap(ns, "flux-clean-cm", fluxLabels, ""),
		"--server-side", "--field-manager=kustomize-controller")
	E.Apply(t,
		scanDeployment(ns, "argo-image", "", argoTracking(ns, "apps", "Deployment", "argo-image"))+
			scanConfigMap(ns, "argo-patched", "", argoTracking(ns, "", "ConfigMap", "argo-patched"))+
			scanConfigMap(ns, "argo-clean", "", argoTracking(ns, "", "ConfigMap", "argo-clean")),
		"--server-side", "--field-manager=argocd-controller")
	// Owned by no engine and edited by hand: never reported.
	E.Apply(t, scanConfigMap(ns, "loose", "", ""), "--server-side")
	E.Kubectl(t, "-n", ns, "label", "configmap", "loose", "team=x")

	E.Kubectl(t, "-n", ns, "scale", "deployment", "flux-scaled", "--replicas=5")
	E.Kubectl(t, "-n", ns, "label", "configmap", "flux-labelled", "team=oncall")
	E.Kubectl(t, "-n", ns, "patch", "configmap", "argo-patched", "--type=merge", "-p", `{"data":{"LOG_LEVEL":"debug"}}`)
	E.Kubectl(t, "-n", ns, "set", "image", "deployment/argo-image", "app=registry.example.com/argo-image:hotfix")
	return ns, []string{
		"ConfigMap argo-patched /data/LOG_LEVEL manual argocd",
		"ConfigMap flux-labelled /metadata/labels/team manual flux",
		"Deployment argo-image /spec/template/spec/containers/0/image manual argocd",
		"Deployment flux-scaled /spec/replicas manual flux",
	}
}

func scanJSON(t *testing.T, res Result) scanResult {
	t.Helper()
	var out scanResult
	DecodeJSON(t, res.Stdout, &out)
	if out.Kind != "ScanResult" {
		t.Fatalf("kind = %q, want ScanResult", out.Kind)
	}
	return out
}

func TestScanFindsExactlyTheDriftedObjects(t *testing.T) {
	ns, want := scanFixture(t)
	res := E.Drift(t, "scan", "-n", ns, "-o", "json")
	if res.Code != 1 {
		t.Fatalf("exit code %d, want 1 (drift)\nstderr: %s", res.Code, res.Stderr)
	}
	got := scanJSON(t, res)
	if strings.Join(got.lines(), "\n") != strings.Join(want, "\n") {
		t.Errorf("drift found:\n%s\nwant:\n%s", strings.Join(got.lines(), "\n"), strings.Join(want, "\n"))
	}
	if got.Stats.Owned != 7 || got.Stats.Drifted != 4 {
		t.Errorf("stats = %+v, want 7 owned, 4 drifted", got.Stats)
	}
	// The summary groups by namespace, kind, manager and engine.
	var groups []string
	for _, s := range got.Summary {
		groups = append(groups, fmt.Sprintf("%s %s %s %s %d/%d", s.Kind, s.Manager, s.Class, s.Engine, s.Objects, s.Fields))
		if s.Namespace != ns {
			t.Errorf("summary row of namespace %q", s.Namespace)
		}
	}
	wantGroups := []string{
		"ConfigMap kubectl-label manual flux 1/1",
		"ConfigMap kubectl-patch manual argocd 1/1",
		"Deployment.apps kubectl manual flux 1/1",
		"Deployment.apps kubectl-set manual argocd 1/1",
	}
	if strings.Join(groups, "\n") != strings.Join(wantGroups, "\n") {
		t.Errorf("summary:\n%s\nwant:\n%s", strings.Join(groups, "\n"), strings.Join(wantGroups, "\n"))
	}

	// One engine at a time.
	res = E.Drift(t, "scan", "-n", ns, "-o", "json", "--engine", "flux")
	for _, l := range scanJSON(t, res).lines() {
		if !strings.HasSuffix(l, " flux") {
			t.Errorf("--engine flux reported %s", l)
		}
	}

	// A label selector narrows the LISTs server-side.
	res = E.Drift(t, "scan", "-n", ns, "-o", "json", "-l", "kustomize.toolkit.fluxcd.io/name=apps")
	if got := scanJSON(t, res).lines(); strings.Join(got, "\n") != strings.Join(want[1:2], "\n")+"\n"+strings.Join(want[3:], "\n") {
		t.Errorf("-l: found\n%s", strings.Join(got, "\n"))
	}

	// Table output: summary first, then the objects, exit 1.
	res = E.Drift(t, "scan", "-n", ns)
	if res.Code != 1 || !strings.Contains(res.Stdout, "NAMESPACE") || !strings.Contains(res.Stdout, ".spec.replicas") {
		t.Errorf("table: exit %d\n%s", res.Code, res.Stdout)
	}
}

func TestScanNoDriftExitsZero(t *testing.T) {
	ns := E.Namespace(t, "scan")
	E.Apply(t, scanDeployment(ns, "web", fluxLabels, ""), "--server-side", "--field-manager=kustomize-controller")
	E.Apply(t, scanConfigMap(ns, "cfg", "", argoTracking(ns, "", "ConfigMap", "cfg")), "--server-side", "--field-manager=argocd-controller")
	res := E.Drift(t, "scan", "-n", ns, "-o", "json")
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", res.Code, res.Stdout, res.Stderr)
	}
	got := scanJSON(t, res)
	if len(got.Items) != 0 || got.Stats.Owned != 2 {
		t.Errorf("items %d, stats %+v", len(got.Items), got.Stats)
	}
}

func TestScanReadOnlyUser(t *testing.T) {
	ns, want := scanFixture(t)
	res := E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, "scan", "-n", ns, "-o", "json")
	if res.Code != 1 {
		t.Fatalf("reader: exit %d, want 1\nstderr: %s", res.Code, res.Stderr)
	}
	if got := scanJSON(t, res).lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reader found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Every listable kind from discovery, still get/list only.
	res = E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, "scan", "-n", ns, "-o", "json", "--kinds", "all")
	got := scanJSON(t, res)
	if res.Code != 1 || strings.Join(got.lines(), "\n") != strings.Join(want, "\n") {
		t.Errorf("reader --kinds all: exit %d, found:\n%s\nstderr: %s", res.Code, strings.Join(got.lines(), "\n"), res.Stderr)
	}
	if got.Stats.Kinds < 15 {
		t.Errorf("--kinds all listed %d kinds", got.Stats.Kinds)
	}
}

func TestScanForbiddenKindIsAWarning(t *testing.T) {
	ns, _ := scanFixture(t)
	// A user who may list ConfigMaps in this namespace and nothing else,
	// reached by impersonation (real RBAC, real Forbidden answers).
	user := "scan-cm-only-" + ns
	E.Apply(t, fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cm-reader, namespace: %s}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: cm-reader, namespace: %s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %s}]
`, ns, ns, user))
	res := E.Drift(t, "scan", "-n", ns, "-o", "json", "--as", user)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1 (the ConfigMaps still drift)\nstderr: %s", res.Code, res.Stderr)
	}
	got := scanJSON(t, res)
	want := []string{
		"ConfigMap argo-patched /data/LOG_LEVEL manual argocd",
		"ConfigMap flux-labelled /metadata/labels/team manual flux",
	}
	if strings.Join(got.lines(), "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got.lines(), "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(res.Stderr, "warning: deployments.apps not scanned: forbidden") {
		t.Errorf("no Forbidden warning for deployments:\n%s", res.Stderr)
	}
	if got.Stats.Kinds != 1 || got.Stats.KindsSkipped == 0 {
		t.Errorf("stats %+v", got.Stats)
	}
}

func TestScanPrometheusParses(t *testing.T) {
	ns, want := scanFixture(t)
	res := E.Drift(t, "scan", "-n", ns, "-o", "prometheus")
	if res.Code != 1 {
		t.Fatalf("exit %d\nstderr: %s", res.Code, res.Stderr)
	}
	p := expfmt.NewTextParser(prommodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(res.Stdout))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, res.Stdout)
	}
	total := 0.0
	for _, m := range fams["kubectl_drift_fields"].GetMetric() {
		total += m.GetGauge().GetValue()
	}
	if int(total) != len(want) {
		t.Errorf("kubectl_drift_fields sums to %v, want %d\n%s", total, len(want), res.Stdout)
	}
	objects := 0.0
	for _, m := range fams["kubectl_drift_objects"].GetMetric() {
		objects += m.GetGauge().GetValue()
	}
	if int(objects) != 4 {
		t.Errorf("kubectl_drift_objects sums to %v, want 4", objects)
	}
}

// TestScanWatch follows drift as it appears and as it is reverted (by the
// engine's manager taking the field back with a forced server-side apply,
// as kustomize-controller does).
func TestScanWatch(t *testing.T) {
	ns, _ := scanFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	w := startJSONWatch(t, ctx, "", "scan", "-n", ns, "--watch", "-o", "json", "--reconcile-interval", "1s", "--watch-timeout", "80s")
	next := func(want func(map[string]any) bool, what string) map[string]any {
		t.Helper()
		return w.next(t, want, what)
	}
	name := func(ev map[string]any) string {
		r, _ := ev["resource"].(map[string]any)
		s, _ := r["name"].(string)
		return s
	}
	// The drift that exists is reported first.
	next(func(ev map[string]any) bool { return ev["type"] == "drifted" && name(ev) == "flux-scaled" }, "existing drift of flux-scaled")

	// New drift appears (a second after the fixture's apply: managedFields
	// times have one-second resolution)...
	time.Sleep(1100 * time.Millisecond)
	E.Kubectl(t, "-n", ns, "annotate", "configmap", "flux-clean-cm", "incident=INC-1")
	ev := next(func(ev map[string]any) bool { return ev["type"] == "drifted" && name(ev) == "flux-clean-cm" }, "new drift")
	if ev["path"] != "/metadata/annotations/incident" || ev["class"] != "manual" {
		t.Errorf("new drift event: %v", ev)
	}
	// ...and when the person takes it away again, no engine reverted
	// anything: "resolved", not "reverted" (issue 12).
	E.Kubectl(t, "-n", ns, "annotate", "configmap", "flux-clean-cm", "incident-")
	ev = next(func(ev map[string]any) bool {
		return (ev["type"] == "resolved" || ev["type"] == "reverted") && name(ev) == "flux-clean-cm"
	}, "end of the flux-clean-cm drift")
	if ev["type"] != "resolved" || ev["path"] != "/metadata/annotations/incident" {
		t.Errorf("a person removed the annotation: got %v, want a resolved event", ev)
	}
	// ...and drift is reverted when the engine's manager takes the field back.
	time.Sleep(1100 * time.Millisecond)
	E.Apply(t, scanDeployment(ns, "flux-scaled", fluxLabels, ""), "--server-side", "--field-manager=kustomize-controller", "--force-conflicts")
	ev = next(func(ev map[string]any) bool { return ev["type"] == "reverted" && name(ev) == "flux-scaled" }, "revert of flux-scaled")
	lived, _ := ev["livedSeconds"].(float64)
	intervals, _ := ev["intervals"].(float64)
	if ev["path"] != "/spec/replicas" || lived < 1 || intervals < 1 {
		t.Errorf("revert event: %v (want /spec/replicas, lived >= 1s, >= 1 interval of 1s)", ev)
	}
}

func TestScanBadInput(t *testing.T) {
	AssertCleanError(t, E.Drift(t, "scan", "--kinds", "nosuchkinds"), "nosuchkinds")
	AssertCleanError(t, E.Drift(t, "scan", "-o", "xml"), `invalid -o "xml"`)
	AssertCleanError(t, E.Drift(t, "scan", "--chunk-size", "0"), "--chunk-size")
	AssertCleanError(t, E.Drift(t, "scan", "--watch", "-o", "prometheus"), "prometheus")
}
