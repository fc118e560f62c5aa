package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// cachedFlux is the flux CLI that hack/build-tools caches, or "" (the
// test that compares with it is then skipped, saying so).
func cachedFlux(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(home, ".cache", "kubectl-drift", "bin", "flux-v*", "flux"))
	if len(matches) == 0 {
		return ""
	}
	return matches[len(matches)-1]
}

// objectsByKey decodes a multi-document YAML stream into its objects,
// keyed by apiVersion, kind, namespace and name: the order of the stream
// is not compared (flux build and render sort differently).
func objectsByKey(t *testing.T, stream []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	dec := yaml.NewDecoder(bytes.NewReader(stream))
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decode: %v\n%s", err, stream)
		}
		if obj == nil {
			continue
		}
		key := []string{}
		for _, p := range [][]string{{"apiVersion"}, {"kind"}, {"metadata", "namespace"}, {"metadata", "name"}} {
			var v any = obj
			for _, k := range p {
				m, _ := v.(map[string]any)
				v = m[k]
			}
			s, _ := v.(string)
			key = append(key, s)
		}
		k := key[0] + " " + key[1] + " " + key[2] + "/" + key[3]
		if _, dup := out[k]; dup {
			t.Fatalf("%s twice in the stream", k)
		}
		out[k] = obj
	}
	return out
}

// TestRenderEqualsFluxBuildOnCorpus renders Flux Kustomizations of a real
// repository (fluxcd/flux2-hub-spoke-example, from the audit corpus) with
// `kubectl drift render` and with the engine's own build, `flux build
// kustomization --dry-run` (kustomize-controller's generator, patches and
// postBuild substitution, run offline): the objects must be equal, order
// aside. staging/tenants substitutes ${CLUSTER_NAME} (postBuild),
// staging/infra-controllers patches every HelmRelease (JSON 6902 patches).
func TestRenderEqualsFluxBuildOnCorpus(t *testing.T) {
	flux := cachedFlux(t)
	if flux == "" {
		t.Skip("no cached flux CLI under ~/.cache/kubectl-drift/bin (make build-tools)")
	}
	src := testutil.CopyTree(t, filepath.Join(auditCorpus, "fluxcd_flux2-hub-spoke-example"), filepath.Join(t.TempDir(), "hub-spoke"))
	for _, tc := range []struct{ ns, name, path, file, feature string }{
		{"staging", "tenants", "./clusters/staging/tenants", "./hub/staging.yaml", "postBuild.substitute"},
		{"staging", "infra-controllers", "./clusters/staging/infra-controllers", "./hub/staging.yaml", "patches"},
		{"production", "apps", "./clusters/production/apps", "./hub/production.yaml", "patches"},
	} {
		t.Run(tc.ns+"/"+tc.name, func(t *testing.T) {
			stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", src, "--kustomization", tc.ns+"/"+tc.name, "-o", "yaml")
			if code != ExitNoDrift {
				t.Fatalf("render exit %d: %s", code, stderr)
			}
			cmd := exec.Command(flux, "build", "kustomization", tc.name, "--namespace", tc.ns, "--path", tc.path,
				"--kustomization-file", tc.file, "--dry-run")
			cmd.Dir = src
			var fluxErr bytes.Buffer
			cmd.Stderr = &fluxErr
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("flux build: %v\n%s", err, fluxErr.String())
			}
			got, exp := objectsByKey(t, []byte(stdout)), objectsByKey(t, want)
			if len(exp) == 0 {
				t.Fatal("flux build printed no object")
			}
			if d := cmp.Diff(exp, got); d != "" {
				t.Errorf("render differs from flux build (%s) (-flux +render):\n%s", tc.feature, d)
			}
		})
	}
}

// TestRenderArgoDirectoryAppOnCorpus renders an Argo CD Application whose
// source is a path of its own repository (gitops-ziichat-app/argo-config,
// Application argocd/apps: a directory of ApplicationSets) and compares it
// with what Argo CD makes of such a source, built here independently: the
// repo-server reads every .yaml/.yml/.json file directly in the path
// (reposerver/repository/repository.go findManifests, recurse off) as
// they are; the application controller puts namespaced objects without a
// namespace in the destination namespace and, with the argocd-cm of the
// repository's resourceTrackingMethod: annotation, adds the tracking id
// APP:GROUP/KIND:NAMESPACE/NAME (util/argo/resource_tracking.go
// BuildAppInstanceValue).
func TestRenderArgoDirectoryAppOnCorpus(t *testing.T) {
	src := testutil.CopyTree(t, filepath.Join(auditCorpus, "gitops-ziichat-app_argo-config"), filepath.Join(t.TempDir(), "argo-config"))
	const dir = "app-of-apps/apps/auto-discovery"
	stdout, stderr, code, _ := run(t, KubectlFrontend, "render", "--source", src, "--app", "argocd/apps", "-o", "yaml")
	if code != ExitNoDrift {
		t.Fatalf("render exit %d: %s", code, stderr)
	}
	var stream []byte
	ents, err := os.ReadDir(filepath.Join(src, dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch filepath.Ext(e.Name()) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		stream = append(append(stream, "\n---\n"...), b...)
	}
	want := objectsByKey(t, stream)
	if len(want) < 3 {
		t.Fatalf("%d objects in %s, want the three ApplicationSets", len(want), dir)
	}
	for _, obj := range want {
		meta := obj["metadata"].(map[string]any)
		if meta["namespace"] == nil {
			meta["namespace"] = "argocd"
		}
		group := strings.SplitN(obj["apiVersion"].(string), "/", 2)[0]
		ann, _ := meta["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			meta["annotations"] = ann
		}
		ann["argocd.argoproj.io/tracking-id"] = fmt.Sprintf("apps:%s/%s:%s/%s", group, obj["kind"], meta["namespace"], meta["name"])
	}
	// Keys were computed before the namespace was set: recompute.
	want = objectsByKey(t, mustYAML(t, want))
	if d := cmp.Diff(want, objectsByKey(t, []byte(stdout))); d != "" {
		t.Errorf("render differs from Argo CD's directory source (-argo +render):\n%s", d)
	}
}

func mustYAML(t *testing.T, objs map[string]map[string]any) []byte {
	t.Helper()
	var out []byte
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, "---\n"...), b...)
	}
	return out
}
