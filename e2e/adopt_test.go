//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// adoptCheckout is the Git checkout of the lab's GitRepository: a
// kustomize directory whose deployment.yaml carries comments, flow style
// and quoting that adopt must keep.
func adoptCheckout(ns string) map[string]string {
	return map[string]string{
		"kustomization.yaml": "resources:\n  - deployment.yaml\n",
		"deployment.yaml": `# web, owned by team shop
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ` + ns + `
  labels: {app: web}   # flow style stays
spec:
  replicas: 2 # an HPA may own this
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: app
          image: "nginx:1.27"   # bumped by renovate
`,
	}
}

// adoptLab is a lab namespace (name) whose Kustomization apps applies
// adoptCheckout from its GitRepository, and the same files checked out in
// dir.
func adoptLab(t *testing.T, name string) (l *fluxLab, ns string, files map[string]string, dir string) {
	t.Helper()
	l = lab(t)
	ns = l.namespace(t, name)
	files = adoptCheckout(ns)
	dir = writeCheckout(t, files)
	l.kustomization(t, ns, l.gitRepo(t, ns, files), "")
	return l, ns, files, dir
}

func writeCheckout(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readCheckout(t *testing.T, dir string, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

func liveImage(t *testing.T, l *fluxLab, ns string) string {
	t.Helper()
	d := l.getJSON(t, gvrDeploy, ns, "web")
	cs, _, _ := unstructured.NestedSlice(d, "spec", "template", "spec", "containers")
	img, _ := cs[0].(map[string]any)["image"].(string)
	return img
}

func liveReplicas(t *testing.T, l *fluxLab, ns string) int64 {
	t.Helper()
	r, _, _ := unstructured.NestedInt64(l.getJSON(t, gvrDeploy, ns, "web"), "spec", "replicas")
	return r
}

// TestAdoptFluxReal: a hotfix (kubectl set image) is adopted into the
// checkout with adopt -k; after the commit is published and the real
// kustomize-controller reconciles, the object is in sync and the hotfix
// value stayed. Every byte of the file but the value is kept.
func TestAdoptFluxReal(t *testing.T) {
	l, ns, files, dir := adoptLab(t, "adopt")

	l.kubectl(t, RunOpts{}, "-n", ns, "set", "image", "deployment/web", "app=nginx:1.29")

	dry := l.drift(t, "adopt", "deploy/web", "-n", ns, "-k", dir, "--dry-run")
	if dry.Code != 0 || !strings.Contains(dry.Stdout, `+          image: "nginx:1.29"   # bumped by renovate`) {
		t.Fatalf("adopt --dry-run: exit %d\n%s\n%s", dry.Code, dry.Stdout, dry.Stderr)
	}
	// --source: the live object's owner (the real Kustomization, found by
	// the ownership labels kustomize-controller set, read from the
	// cluster) says where its manifests are: the same change as -k.
	src := l.drift(t, "adopt", "deploy/web", "-n", ns, "--source", dir, "--dry-run")
	if src.Code != 0 || src.Stdout != dry.Stdout {
		t.Fatalf("adopt --source --dry-run: exit %d\n%s\n%s\nwant the -k diff:\n%s", src.Code, src.Stdout, src.Stderr, dry.Stdout)
	}
	if got := readCheckout(t, dir, "deployment.yaml"); got["deployment.yaml"] != files["deployment.yaml"] {
		t.Fatal("--dry-run wrote the checkout")
	}
	res := l.drift(t, "adopt", "deploy/web", "-n", ns, "-k", dir)
	if res.Code != 0 {
		t.Fatalf("adopt: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	got := readCheckout(t, dir, "kustomization.yaml", "deployment.yaml")
	want := strings.Replace(files["deployment.yaml"], `"nginx:1.27"`, `"nginx:1.29"`, 1)
	if got["deployment.yaml"] != want {
		t.Fatalf("adopted file:\n%s\nwant:\n%s", got["deployment.yaml"], want)
	}

	// Commit: the engine now applies the adopted file.
	repo := l.getJSON(t, gvrGitRepo, ns, "repo")
	gen, _, _ := unstructured.NestedInt64(repo, "metadata", "generation")
	l.waitApplied(t, ns, l.publish(t, ns, gen, got))
	l.reconcile(t, gvrKS, ns, "apps")
	if img := liveImage(t, l, ns); img != "nginx:1.29" {
		t.Fatalf("after reconcile the image is %s, want the adopted nginx:1.29", img)
	}
	ex := l.drift(t, "explain", "deploy/web", "-n", ns, "-k", dir)
	if ex.Code != 0 {
		t.Fatalf("explain after adopt + reconcile: exit %d, want 0 (in sync)\n%s\n%s", ex.Code, ex.Stdout, ex.Stderr)
	}
	again := l.drift(t, "adopt", "deploy/web", "-n", ns, "-k", dir)
	if again.Code != 0 || !strings.Contains(again.Stdout, "Nothing to adopt") {
		t.Fatalf("second adopt: exit %d\n%s\n%s", again.Code, again.Stdout, again.Stderr)
	}
}

// TestSuggestFluxReal: replicas written through the scale subresource by
// kube-controller-manager (what an HPA does) are reverted by the real
// kustomize-controller; suggest proposes a spec.ignore rule, checked by our
// judge; with that rule in the Kustomization, two reconciles leave the
// value alone.
func TestSuggestFluxReal(t *testing.T) {
	l, ns, _, dir := adoptLab(t, "suggest")
	hpa := func() {
		l.kubectl(t, RunOpts{}, "-n", ns, "patch", "deployment/web", "--subresource=scale", "--type=merge",
			"-p", `{"spec":{"replicas":5}}`, "--field-manager=kube-controller-manager")
	}
	hpa()
	// Without a rule the engine fights the autoscaler.
	l.reconcile(t, gvrKS, ns, "apps")
	if r := liveReplicas(t, l, ns); r != 2 {
		t.Fatalf("without a rule, replicas after reconcile = %d, want Git's 2", r)
	}
	hpa()

	res := l.drift(t, "suggest", "deploy/web", "-n", ns, "-k", dir, "-o", "json")
	if res.Code != 0 {
		t.Fatalf("suggest: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var list struct {
		Items []struct {
			Path string `json:"path"`
			Flux struct {
				Paths  []string       `json:"paths"`
				Target map[string]any `json:"target"`
			} `json:"flux"`
			Checks []struct {
				Owner   string `json:"owner"`
				Verdict string `json:"verdict"`
				OK      bool   `json:"ok"`
			} `json:"checks"`
		} `json:"items"`
	}
	DecodeJSON(t, res.Stdout, &list)
	if len(list.Items) != 1 || list.Items[0].Path != "/spec/replicas" {
		t.Fatalf("suggestions: %s", res.Stdout)
	}
	it := list.Items[0]
	if len(it.Checks) != 1 || !it.Checks[0].OK || it.Checks[0].Verdict != "ignored" {
		t.Fatalf("suggestion not checked against Kustomization %s/apps: %s", ns, res.Stdout)
	}

	// Apply the suggested rule to the Kustomization, as a commit would.
	rule := map[string]any{"paths": it.Flux.Paths, "target": it.Flux.Target}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"ignore": []any{rule}}})
	l.kubectl(t, RunOpts{}, "-n", ns, "patch", "kustomization/apps", "--type=merge", "-p", string(patch))
	for i := 1; i <= 2; i++ {
		l.reconcile(t, gvrKS, ns, "apps")
		if r := liveReplicas(t, l, ns); r != 5 {
			t.Fatalf("reconcile %d with the suggested rule: replicas = %d, want the autoscaler's 5", i, r)
		}
	}
	// And our explain agrees: nothing left that Flux would revert.
	ex := l.drift(t, "explain", "deploy/web", "-n", ns, "-k", dir, "-o", "json")
	if ex.Code != 0 {
		t.Fatalf("explain with the rule: exit %d, want 0\n%s\n%s", ex.Code, ex.Stdout, ex.Stderr)
	}
}
