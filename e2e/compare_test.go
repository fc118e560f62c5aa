//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rules, compare and normalize against the real API server: an Application
// and a Kustomization holding the same rule are read with --from-cluster by
// the get/list-only user, compared as equivalent, and a tracked Deployment
// is normalized as TYPE/NAME. The rule targets a made-up group so that other
// tests' rules in the shared cluster cannot become its counterparts.

var compareFluxCRDs setupOnce

// installFluxCRDsForCompare applies the Kustomization and HelmRelease CRDs
// from the controllers' module zips (no flux CLI needed).
func installFluxCRDsForCompare(t *testing.T) {
	t.Helper()
	compareFluxCRDs.do(t, func() error { return applyFluxCRDs(t, "drift-e2e-compare") })
}

type compareResult struct {
	Rule struct {
		Engine string `json:"engine"`
		Origin struct {
			Object string `json:"object"`
			Field  string `json:"field"`
		} `json:"origin"`
	} `json:"rule"`
	Status  string   `json:"status"`
	Reasons []string `json:"reasons"`
}

func TestCompareFromCluster(t *testing.T) {
	installApplicationCRD(t)
	installFluxCRDsForCompare(t)
	ns := E.Namespace(t, "compare")
	E.Apply(t, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: widgets
  namespace: %[1]s
spec:
  project: default
  source: {repoURL: https://git.example.com/widgets.git, path: ., targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: %[1]s}
  ignoreDifferences:
    - group: e2e-compare.example.com
      kind: Widget
      jsonPointers: [/spec/size]
    - group: apps
      kind: Deployment
      name: web
      jsonPointers: [/spec/minReadySeconds]
    - group: e2e-compare.example.com
      kind: Widget
      managedFieldsManagers: [widget-operator]
    - group: apps
      kind: Deployment
      name: web
      managedFieldsManagers: [kubectl-patch]
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: widgets
  namespace: %[1]s
spec:
  interval: 10m
  path: ./widgets
  prune: true
  sourceRef: {kind: GitRepository, name: widgets}
  ignore:
    - paths: [/spec/size]
      target: {group: e2e-compare\.example\.com, kind: Widget}
`, ns))

	res := E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, "compare", "--from-cluster", "-o", "json")
	if res.Code != 0 {
		t.Fatalf("compare --from-cluster: exit %d\n%s", res.Code, res.Stderr)
	}
	var c struct {
		Results []compareResult `json:"results"`
	}
	DecodeJSON(t, res.Stdout, &c)
	want := map[string]string{
		"argocd Application " + ns + "/widgets .spec.ignoreDifferences[0]": "equivalent",
		"argocd Application " + ns + "/widgets .spec.ignoreDifferences[2]": "untranslatable",
		"flux Kustomization " + ns + "/widgets .spec.ignore[0]":            "equivalent",
	}
	got := map[string]string{}
	for _, r := range c.Results {
		if strings.Contains(r.Rule.Origin.Object, ns+"/") {
			got[r.Rule.Engine+" "+r.Rule.Origin.Object+" "+r.Rule.Origin.Field] = r.Status
		}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q (all of ours: %v)", k, got[k], w, got)
		}
	}

	// rules --from-cluster lists them with their object + field origin.
	res = E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, "rules", "--from-cluster")
	if res.Code != 0 || !strings.Contains(res.Stdout, "Kustomization "+ns+"/widgets .spec.ignore[0]") {
		t.Fatalf("rules --from-cluster: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}

	// --to flux from the cluster, then compare the translation with the
	// cluster's rules: the Application's translatable rules are equivalent.
	res = E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, "compare", "--from-cluster", "--to", "flux")
	if res.Code != 0 || !strings.Contains(res.Stdout, "e2e-compare\\.example\\.com") {
		t.Fatalf("--to flux: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}

	// normalize TYPE/NAME: a Deployment tracked by the Application (an app
	// outside the control-plane namespace is named <ns>_<name>).
	web := deployWeb{Namespace: ns, Replicas: 2, MinReadySeconds: 5, Image: "nginx:1.27"}
	tracked := web
	tracked.Annotations = "argocd.argoproj.io/tracking-id: " + strconv.Quote(ns+"_widgets:apps/Deployment:"+ns+"/web")
	E.Apply(t, tracked.YAML(), "--server-side", "--field-manager=argocd-controller")
	E.Kubectl(t, "patch", "-n", ns, "deployment/web", "--type=merge", "-p", `{"spec":{"minReadySeconds":30}}`)
	res = E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, "normalize", "deployment/web", "-n", ns, "--engine", "argocd", "--from-cluster", "-o", "json")
	if res.Code != 0 {
		t.Fatalf("normalize: exit %d\n%s", res.Code, res.Stderr)
	}
	var obj map[string]any
	DecodeJSON(t, res.Stdout, &obj)
	spec, _ := obj["spec"].(map[string]any)
	if _, has := spec["minReadySeconds"]; has || spec["replicas"] == nil {
		t.Fatalf("Argo CD's view must drop /spec/minReadySeconds (rule [1]) and keep the rest: %v", spec)
	}

	// compare --effect lists the kinds the rules name and shows what each
	// rule removes from the live objects.
	res = E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, "compare", "--from-cluster", "--effect", "-o", "json")
	if res.Code != 0 {
		t.Fatalf("compare --effect: exit %d\n%s", res.Code, res.Stderr)
	}
	var ce struct {
		Results []struct {
			compareResult
			Effect *struct {
				Fields []string `json:"fields"`
			} `json:"effect"`
		} `json:"results"`
	}
	DecodeJSON(t, res.Stdout, &ce)
	// Rule [1] removes the pointer; rule [3] trusts kubectl-patch, which
	// owns minReadySeconds after the real `kubectl patch` above.
	found := 0
	for _, r := range ce.Results {
		if r.Rule.Origin.Object != "Application "+ns+"/widgets" {
			continue
		}
		switch r.Rule.Origin.Field {
		case ".spec.ignoreDifferences[1]", ".spec.ignoreDifferences[3]":
			found++
			if r.Effect == nil || len(r.Effect.Fields) != 1 || r.Effect.Fields[0] != "Deployment.apps "+ns+"/web /spec/minReadySeconds" {
				t.Errorf("effect of %s on the live Deployment: %+v", r.Rule.Origin.Field, r.Effect)
			}
		}
	}
	if found != 2 {
		t.Errorf("rules [1] and [3] in compare --effect output: found %d", found)
	}

	// --diff against the desired state: the patched minReadySeconds is
	// hidden by the rule, so there is no difference (exit 0)...
	desired := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(desired, []byte(web.YAML()), 0o600); err != nil {
		t.Fatal(err)
	}
	res = E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, "normalize", "deployment/web", "-n", ns, "--engine", "argocd", "--from-cluster", "--diff", "-f", desired)
	if res.Code != 0 {
		t.Fatalf("normalize --diff: exit %d, want 0 (minReadySeconds ignored)\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	// ...while a scale is drift (exit 1, a unified diff of replicas).
	E.Kubectl(t, "scale", "-n", ns, "deployment/web", "--replicas=4")
	res = E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, "normalize", "deployment/web", "-n", ns, "--engine", "argocd", "--from-cluster", "--diff", "-f", desired)
	if res.Code != 1 || !strings.Contains(res.Stdout, "-  replicas: 4") || !strings.Contains(res.Stdout, "+  replicas: 2") {
		t.Fatalf("normalize --diff after scale: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}
