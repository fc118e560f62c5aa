//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 12: answers that misled a newcomer, each on the real API server
// with real kubectl operations, asserting the wording and the exit code.

// orphanDeployment is applied by kustomize-controller (server-side) with
// ownership labels naming a Kustomization that does not exist, or by
// argocd-controller with a tracking annotation naming an Application that
// does not exist.
func orphanDeployment(ns, name, meta string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
  namespace: %s
%s
spec:
  replicas: 2
  selector:
    matchLabels: {app: %s}
  template:
    metadata:
      labels: {app: %s}
    spec:
      containers:
      - name: app
        image: nginx:1.27
`, name, ns, meta, name, name)
}

func TestUXMissingKustomizationIsNotReverted(t *testing.T) {
	ns := E.Namespace(t, "ux")
	meta := "  labels:\n    kustomize.toolkit.fluxcd.io/name: deleted-long-ago\n    kustomize.toolkit.fluxcd.io/namespace: flux-system"
	E.Apply(t, orphanDeployment(ns, "web", meta), "--server-side", "--field-manager=kustomize-controller")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=4")

	// The drift is shown, but the exit code is the engines' own verdict
	// (issue 20): nothing reconciles the object, so nothing will change it.
	res := E.Drift(t, "explain", "deploy/web", "-n", ns)
	if res.Code != 0 {
		t.Fatalf("explain: exit %d, want 0 (no engine acts on it)\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, want := range []string{
		"Kustomization flux-system/deleted-long-ago",
		"does not exist: nothing reconciles this object",
		"not-applied",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("explain does not say %q:\n%s", want, res.Stdout)
		}
	}
	// The verdict column and the Why lines read "reverted:" / "reverted".
	if strings.Contains(res.Stdout, "reverted:") || strings.Contains(res.Stdout, "manual  reverted") {
		t.Errorf("explain says reverted for an object nothing reconciles:\n%s", res.Stdout)
	}
	r := explainJSON(t, 0, "deploy/web", "-n", ns)
	if len(r.Owners) != 1 || !r.Owners[0].Missing || r.Owners[0].Found {
		t.Errorf("owners %+v: want one missing Kustomization", r.Owners)
	}

	scan := E.Drift(t, "scan", "-n", ns)
	if scan.Code != 1 || !strings.Contains(scan.Stdout, "flux: not-applied") || strings.Contains(scan.Stdout, ": reverted") {
		t.Errorf("scan: exit %d, want 1 with flux: not-applied and no reverted:\n%s\n%s", scan.Code, scan.Stdout, scan.Stderr)
	}
}

func TestUXMissingApplicationIsNotReverted(t *testing.T) {
	ns := E.Namespace(t, "ux")
	meta := fmt.Sprintf("  annotations:\n    argocd.argoproj.io/tracking-id: deleted-app:apps/Deployment:%s/web", ns)
	E.Apply(t, orphanDeployment(ns, "web", meta), "--server-side", "--field-manager=argocd-controller")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=4")

	res := E.Drift(t, "explain", "deploy/web", "-n", ns, "--engine", "argocd")
	if res.Code != 0 {
		t.Fatalf("explain: exit %d, want 0 (no Application: nothing reconciles it)\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, want := range []string{"Application argocd/deleted-app", "does not exist: nothing reconciles this object", "not-applied"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("explain does not say %q:\n%s", want, res.Stdout)
		}
	}
	// The verdict column and the Why lines read "reverted:" / "reverted".
	if strings.Contains(res.Stdout, "reverted:") || strings.Contains(res.Stdout, "manual  reverted") {
		t.Errorf("explain says reverted for an object nothing reconciles:\n%s", res.Stdout)
	}
}

// An object without managedFields: the API server clears them when a
// patch sets them to [{}]; kubectl get -o yaml drops them unless asked.
func TestUXNoManagedFieldsCannotBeTold(t *testing.T) {
	ns := E.Namespace(t, "ux")
	E.Apply(t, orphanDeployment(ns, "web", "  labels: {team: shop}"), "--server-side", "--field-manager=kustomize-controller")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=4")
	E.Kubectl(t, "-n", ns, "patch", "deployment/web", "--type=merge", "-p", `{"metadata":{"managedFields":[{}]}}`)
	if mf := E.Kubectl(t, "-n", ns, "get", "deployment/web", "--show-managed-fields", "-o", "jsonpath={.metadata.managedFields}"); mf != "" {
		t.Fatalf("managedFields not cleared: %s", mf)
	}

	res := E.Drift(t, "explain", "deploy/web", "-n", ns)
	if res.Code != 3 {
		t.Fatalf("explain: exit %d, want 3 (cannot be told)\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if strings.Contains(res.Stdout, "No drift") || !strings.Contains(res.Stdout, "Drift cannot be told") ||
		!strings.Contains(res.Stdout, "-f FILE or -k DIR") || !strings.Contains(res.Stdout, "--server-dry-run") {
		t.Errorf("explain output:\n%s", res.Stdout)
	}

	// A saved object without managedFields (the default kubectl get).
	saved := writeFile(t, "live.yaml", E.Kubectl(t, "-n", ns, "get", "deployment/web", "-o", "yaml"))
	res = E.Drift(t, "explain", "--live-file", saved)
	if res.Code != 3 || !strings.Contains(res.Stdout, "--show-managed-fields") {
		t.Errorf("--live-file: exit %d, want 3 and the --show-managed-fields hint\n%s", res.Code, res.Stdout)
	}

	// With the desired state given, the comparison still answers.
	manifest := writeFile(t, "web.yaml", orphanDeployment(ns, "web", "  labels: {team: shop}"))
	res = E.Drift(t, "explain", "deploy/web", "-n", ns, "-f", manifest)
	if res.Code != 1 || !strings.Contains(res.Stdout, ".spec.replicas") {
		t.Errorf("-f: exit %d, want 1 with .spec.replicas\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}

	help := E.Drift(t, "explain", "--help")
	if !strings.Contains(help.Stdout, "3 drift cannot be told") {
		t.Errorf("explain --help does not document exit code 3:\n%s", help.Stdout)
	}
}

func TestUXFileDirWithKustomizationHintsK(t *testing.T) {
	ns := E.Namespace(t, "ux")
	E.Apply(t, orphanDeployment(ns, "web", "  labels: {team: shop}"), "--server-side", "--field-manager=kustomize-controller")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(orphanDeployment(ns, "web", "  labels: {team: shop}")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [web.yaml]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := E.Drift(t, "explain", "deploy/web", "-n", ns, "-f", dir)
	AssertCleanError(t, res, "use -k "+dir)

	// -k reads the build: no drift.
	res = E.Drift(t, "explain", "deploy/web", "-n", ns, "-k", dir)
	if res.Code != 0 || strings.Contains(res.Stderr, "use -k") {
		t.Errorf("-k: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

// On a cluster where nothing reconciles the object, --engine auto keeps
// quiet about both engines; asking for one shows its notes.
func TestUXEnginesQuietUnlessAsked(t *testing.T) {
	ns := E.Namespace(t, "ux")
	E.Apply(t, orphanDeployment(ns, "plain", "  labels: {team: shop}"))
	E.Kubectl(t, "-n", ns, "scale", "deployment/plain", "--replicas=3")
	res := E.Drift(t, "explain", "deploy/plain", "-n", ns)
	if res.Code != 0 {
		t.Fatalf("explain: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if strings.Contains(res.Stdout+res.Stderr, "[flux]") || strings.Contains(res.Stdout+res.Stderr, "[argocd]") {
		t.Errorf("engine notes without --engine on an object no engine reconciles:\n%s\n%s", res.Stdout, res.Stderr)
	}
	res = E.Drift(t, "explain", "deploy/plain", "-n", ns, "--engine", "flux")
	if !strings.Contains(res.Stdout, "[flux]") {
		t.Errorf("--engine flux: the Flux note is gone:\n%s", res.Stdout)
	}
}

// --engine argocd on a Flux-owned object names the Flux owner (not judged)
// instead of "OWNER none", and --rules it cannot use is a warning.
func TestUXOtherEngineOwnerAndUnusedRules(t *testing.T) {
	ns := E.Namespace(t, "ux")
	meta := "  labels:\n    kustomize.toolkit.fluxcd.io/name: apps\n    kustomize.toolkit.fluxcd.io/namespace: flux-system"
	E.Apply(t, orphanDeployment(ns, "web", meta), "--server-side", "--field-manager=kustomize-controller")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=4")
	kust := writeFile(t, "kust.yaml", `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  prune: true
  sourceRef: {kind: GitRepository, name: repo}
`)
	res := E.Drift(t, "explain", "deploy/web", "-n", ns, "--engine", "argocd", "--rules", kust)
	if res.Code != 1 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if strings.Contains(res.Stdout, "none found") || !strings.Contains(res.Stdout, "Kustomization flux-system/apps") || !strings.Contains(res.Stdout, "not judged") {
		t.Errorf("OWNER line does not name the Flux owner as not judged:\n%s", res.Stdout)
	}
	if !strings.Contains(res.Stderr, "holds only Flux objects, which --engine argocd does not use") {
		t.Errorf("--rules with Flux objects under --engine argocd: no warning:\n%s", res.Stderr)
	}
}

// Forbidden everywhere (an impersonated user without rights): every source
// that could not be read is named, and nothing read is exit 2.
func TestUXRulesFromClusterForbidden(t *testing.T) {
	res := E.Drift(t, "rules", "--from-cluster", "--as", "nobody")
	if res.Code != 2 {
		t.Fatalf("exit %d, want 2\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, want := range []string{"ConfigMap argocd/argocd-cm", "ConfigMap argocd/argocd-cmd-params-cm", "Applications", "nothing could be read"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("stderr does not name %q:\n%s", want, res.Stderr)
		}
	}
	if strings.Contains(res.Stdout, "ConfigMap argocd/argocd-cm data[") {
		t.Errorf("rules cites an argocd-cm it could not read:\n%s", res.Stdout)
	}
}

func TestUXInvalidSelectorIsOneLine(t *testing.T) {
	res := E.Drift(t, "scan", "-A", "-l", "app=(")
	AssertCleanError(t, res, `invalid --selector "app=("`)
}

// Text output fits the width: every line fits $COLUMNS (no terminal here),
// a reason shared by fields is said once with the fields under it, --why
// prints it whole, -o wide keeps one line per reason.
// kubectl scale is not listed among what Flux's cleanup takes back.
func TestUXTextFitsAndSaysReasonsOnce(t *testing.T) {
	ns := E.Namespace(t, "ux")
	meta := "  labels:\n    kustomize.toolkit.fluxcd.io/name: apps\n    kustomize.toolkit.fluxcd.io/namespace: flux-system"
	E.Apply(t, orphanDeployment(ns, "web", meta), "--server-side", "--field-manager=kustomize-controller")
	E.Kubectl(t, "-n", ns, "label", "deployment/web", "hotfix=true", "oncall=paged")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=4")
	manifest := writeFile(t, "web.yaml", orphanDeployment(ns, "web", meta))
	kust := writeFile(t, "kust.yaml", `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {interval: 10m, prune: true, sourceRef: {kind: GitRepository, name: repo}}
`)
	args := []string{"explain", "deploy/web", "-n", ns, "-f", manifest, "--engine", "flux", "--rules", kust}
	res := E.Run(t, RunOpts{Env: []string{"COLUMNS=100"}}, KubectlDrift, args...)
	if res.Code != 1 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, l := range strings.Split(res.Stdout, "\n") {
		if n := len([]rune(l)); n > 100 {
			t.Errorf("line is %d columns with COLUMNS=100: %q", n, l)
		}
	}
	why := res.Stdout[strings.Index(res.Stdout, "Why:"):]
	if i := strings.Index(why, "Notes:"); i > 0 {
		why = why[:i]
	}
	// One paragraph for the cleanup reason, whose manager differs per
	// label (kubectl-label for both here), with both labels under it.
	if strings.Count(why, "flux reverted: set by kubectl-label") != 1 || strings.Count(why, "- .metadata.labels.") != 2 {
		t.Errorf("the cleanup reason shared by both labels is not said once with both labels under it:\n%s", why)
	}
	whole := E.Run(t, RunOpts{Env: []string{"COLUMNS=100"}}, KubectlDrift, append(args, "--why")...)
	flat := strings.Join(strings.Fields(whole.Stdout), " ")
	if strings.Count(flat, "managedFields cleanup") != 1 || !strings.Contains(flat, "not kubectl scale") {
		t.Errorf("--why: the cleanup reason is not said once, or does not exclude kubectl scale:\n%s", whole.Stdout)
	}
	wide := E.Run(t, RunOpts{Env: []string{"COLUMNS=100"}}, KubectlDrift, append(args, "-o", "wide")...)
	if !strings.Contains(wide.Stdout, "absent from the manifest, so the apply removes it on its next reconcile (interval 10m), because kustomize-controller first merges") {
		t.Errorf("-o wide wrapped the reason:\n%s", wide.Stdout)
	}
}

// normalize prints what the input had, normalized: no zero values from the
// typed round trip. And -o speaks one vocabulary.
func TestUXNormalizeAndOutputVocabulary(t *testing.T) {
	ns := E.Namespace(t, "ux")
	manifest := writeFile(t, "web.yaml", orphanDeployment(ns, "web", "  labels: {team: shop}"))
	for _, engine := range []string{"argocd", "flux"} {
		res := E.Drift(t, "normalize", "-f", manifest, "--engine", engine)
		if res.Code != 0 {
			t.Fatalf("normalize --engine %s: exit %d\n%s", engine, res.Code, res.Stderr)
		}
		for _, added := range []string{"creationTimestamp: null", "strategy: {}", "resources: {}"} {
			if strings.Contains(res.Stdout, added) {
				t.Errorf("normalize --engine %s added %q:\n%s", engine, added, res.Stdout)
			}
		}
	}
	E.Apply(t, orphanDeployment(ns, "web", "  labels: {team: shop}"))
	if res := E.Drift(t, "scan", "-n", ns, "-o", "text"); res.Code != 0 {
		t.Errorf("scan -o text: exit %d\n%s", res.Code, res.Stderr)
	}
	if res := E.Drift(t, "explain", "deploy/web", "-n", ns, "-o", "table"); res.Code != 0 {
		t.Errorf("explain -o table: exit %d\n%s", res.Code, res.Stderr)
	}
	AssertCleanError(t, E.Drift(t, "rules", "--from-cluster", "-o", "wide"), `invalid -o "wide": must be one of table, json, yaml`)
}
