package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
