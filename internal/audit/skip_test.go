package audit

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	return testutil.WriteTree(t, files)
}

// Files that hold no Kubernetes object are skipped and counted, not
// reported as DRIFT012 errors; an ignore file and --exclude leave paths
// out; a real broken manifest is still an error.
func TestAuditSkipsNonKubernetesYAMLAndHonoursExcludes(t *testing.T) {
	root := writeTree(t, map[string]string{
		"talos/controlplane.yaml":   "version: v1alpha1\nmachine:\n  type: controlplane\n",
		"helmfile.yaml":             "releases:\n- name: cilium\n  chart: cilium/cilium\n",
		"ansible/site.yml":          "- hosts: all\n  roles: [k3s]\n",
		"index.yaml":                "apiVersion: v1\nentries: {}\n",
		"kustomization.yaml":        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
		"templated.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n  labels: {{ toYaml .Values.labels | nindent 4 }\n",
		"vendor/broken.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n",
		"generated/also-broken.yml": "kind: [\n",
		"app/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
		"app/broken.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: [\n",
		IgnoreFile:                  "# vendored\nvendor/\n",
	})
	res, err := Run(Options{Root: root, Paths: []string{root}, Extractors: testExtractors(), Engines: testEngines(), Exclude: []string{"generated"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		got = append(got, string(f.Check)+" "+f.File)
	}
	if d := cmp.Diff([]string{"DRIFT012 app/broken.yaml"}, got); d != "" {
		t.Errorf("findings (-want +got):\n%s", d)
	}
	// talos, helmfile, ansible, index.yaml, kustomization.yaml, templated.
	if res.Skipped != 6 || res.Manifests != 1 || res.Files != 8 {
		t.Errorf("files %d, skipped %d, manifests %d; want 8, 6, 1", res.Files, res.Skipped, res.Manifests)
	}
}

func TestIgnoreListMatchesLikeGitignore(t *testing.T) {
	l := &ignoreList{}
	for _, p := range []string{"*.json", "charts/", "/talos/**/*.yaml", "!keep.json", "docs/*.yml"} {
		l.add(p)
	}
	for _, c := range []struct {
		path string
		dir  bool
		want bool
	}{
		{"a/b/c.json", false, true},
		{"a/keep.json", false, false},
		{"x/charts", true, true},
		{"x/charts", false, false},
		{"talos/a/b/c.yaml", false, true},
		{"talos/c.yaml", false, true},
		{"other/talos/c.yaml", false, false},
		{"docs/a.yml", false, true},
		{"docs/sub/a.yml", false, false},
		{"app/cm.yaml", false, false},
	} {
		if got := l.match(c.path, c.dir); got != c.want {
			t.Errorf("match(%q, dir=%v) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}
