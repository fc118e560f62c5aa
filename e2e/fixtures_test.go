//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// deployWeb is the Deployment most e2e tests apply, put in Git or give to
// -f: its pods are selected and labelled app=web and run a container named
// "app". The fields are what the tests vary; a zero field is left out of
// the manifest. The string fields hold YAML flow content as it is written
// in the manifest ("app: web, team: shop"), so a test shows the object it
// works on in one line.
type deployWeb struct {
	Name        string // metadata.name; "" is web
	Namespace   string // "" leaves it to -n, the Kustomization or Helm
	Labels      string // body of the flow map metadata.labels
	Annotations string // body of the flow map metadata.annotations
	// Replicas: 0 leaves spec.replicas out (an HPA or a /scale writer owns it).
	Replicas        int
	MinReadySeconds int
	Image           string // the app container's image
	Env             string // body of the flow sequence of the app container's env
	Ports           string // body of the flow sequence of its ports
	// Sidecar adds a second container, sidecar (busybox:1.36, sleeping).
	Sidecar bool
}

// YAML returns the manifest, one document ending in a newline.
func (d deployWeb) YAML() string {
	name := d.Name
	if name == "" {
		name = "web"
	}
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	opt := func(value, format string) {
		if value != "" {
			line(format, value)
		}
	}
	line("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s", name)
	opt(d.Namespace, "  namespace: %s")
	opt(d.Labels, "  labels: {%s}")
	opt(d.Annotations, "  annotations: {%s}")
	line("spec:")
	if d.Replicas != 0 {
		line("  replicas: %d", d.Replicas)
	}
	if d.MinReadySeconds != 0 {
		line("  minReadySeconds: %d", d.MinReadySeconds)
	}
	line("  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}")
	line("    spec:\n      containers:\n      - name: app\n        image: %s", d.Image)
	opt(d.Env, "        env: [%s]")
	opt(d.Ports, "        ports: [%s]")
	if d.Sidecar {
		line(`      - {name: sidecar, image: "busybox:1.36", command: [sleep, "3600"]}`)
	}
	return b.String()
}

// moduleDir downloads module@version through the Go module proxy (no
// other network) and returns its directory in the module cache, where the
// tests find the CRDs that upstream ships.
func moduleDir(module string) (string, error) {
	dl := exec.Command("go", "mod", "download", "-json", module)
	dl.Dir = E.Root
	out, err := dl.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w", module, err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no Dir in %s", module, out)
	}
	return info.Dir, nil
}

// toolCacheDir is the directory hack/*.sh keep built tools and private
// clusters' run directories in: ${DRIFT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-drift},
// as hack/cluster.sh computes it, so that a test's cluster directory is
// where the script looks for it.
func toolCacheDir() string {
	if d := os.Getenv("DRIFT_CACHE_DIR"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "kubectl-drift")
}

// explainAgrees runs `explain OBJ -n NS -o json` twice through drift: with
// srcArgs (--source ...) and with -f hand, the same objects rendered by
// hand. Both must exit alike, 0 or 1, and print the same report but for
// desiredSource; it returns the --source run for the caller's own checks.
func explainAgrees(t *testing.T, drift func(t testing.TB, args ...string) Result, obj, ns, hand string, srcArgs ...string) Result {
	t.Helper()
	src := drift(t, append([]string{"explain", obj, "-n", ns, "-o", "json"}, srcArgs...)...)
	file := drift(t, "explain", obj, "-n", ns, "-f", hand, "-o", "json")
	if src.Code != file.Code || src.Code > 1 {
		t.Fatalf("%s: exit --source %d (%s), -f %d (%s); want the same, 0 or 1", obj, src.Code, src.Stderr, file.Code, file.Stderr)
	}
	if a, b := reportWithout(t, src.Stdout), reportWithout(t, file.Stdout); a != b {
		t.Errorf("%s: explain --source and -f disagree:\n--- --source\n%s\n--- -f\n%s", obj, a, b)
	}
	return src
}

// fluxKustomization is the Kustomization "apps" in ns that the Flux tests
// without the lab own their objects by (GitRepository repo, path ./app);
// spec is more of its spec, each line indented by two spaces.
func fluxKustomization(ns, spec string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: ` + ns + `}
spec:
  interval: 10m
  path: ./app
  prune: true
  sourceRef: {kind: GitRepository, name: repo}
` + spec
}

// fluxOwnerLabels is the body of the labels flux build adds to the objects
// of fluxKustomization(ns).
func fluxOwnerLabels(ns string) string {
	return "kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: " + ns
}

// fluxSettings is ConfigMap settings as kustomize-controller applies it
// for fluxKustomization(ns) (with its labels); fluxSettingsEdit is the
// same field as someone else writes it (a person's one-off edit).
func fluxSettings(ns, level string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + ", labels: {" + fluxOwnerLabels(ns) + "}}\ndata: {level: \"" + level + "\"}\n"
}

func fluxSettingsEdit(ns, level string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {level: \"" + level + "\"}\n"
}

// fluxFight is a namespace of the shared cluster where the Flux
// Kustomization apps owns Deployment web (3 replicas) and ConfigMap
// settings (level info), server-side applied as kustomize-controller: the
// stage on which serve and scan --watch see a script fight the engine.
type fluxFight struct{ ns string }

func newFluxFight(t *testing.T, area string) fluxFight {
	t.Helper()
	fluxCLI(t) // the Kustomization CRD
	f := fluxFight{ns: E.Namespace(t, area)}
	E.Apply(t, fluxKustomization(f.ns, ""), "--server-side", "--field-manager=drift-e2e-flux")
	f.apply(t, "kustomize-controller", f.web(3))
	f.apply(t, "kustomize-controller", fluxSettings(f.ns, "info"))
	return f
}

// apply is a forced server-side apply of doc as manager.
func (f fluxFight) apply(t *testing.T, manager, doc string) {
	t.Helper()
	E.Apply(t, doc, "--server-side", "--force-conflicts", "--field-manager="+manager)
}

// web is Deployment web as the engine applies it (Git's values, the
// ownership labels); scale is only its replicas, as a script writes them.
func (f fluxFight) web(replicas int) string {
	return deployWeb{Namespace: f.ns, Labels: fluxOwnerLabels(f.ns), Replicas: replicas, Image: "nginx:1.27"}.YAML()
}

func (f fluxFight) scale(replicas int) string {
	return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: %s}\nspec: {replicas: %d}\n", f.ns, replicas)
}

// readKnownDivergences reads a conformance suite's list of excused
// disagreements with the running controller: a line is keyFields fields
// naming the case and a reason that is mandatory (# comments). check, if
// set, vets each line's fields (n is its line number).
func readKnownDivergences(t *testing.T, path string, keyFields int, usage string, check func(n int, fields []string)) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("known divergences: %v", err)
	}
	defer func() { _ = f.Close() }() // read only: a Close error loses nothing
	known := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) <= keyFields {
			t.Fatalf("%s:%d: want %q: %q", path, n, usage, line)
		}
		if check != nil {
			check(n, fields)
		}
		known[strings.Join(fields[:keyFields], " ")] = strings.Join(fields[keyFields:], " ")
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("known divergences: %v", err)
	}
	return known
}

// wholeSuiteRan says whether -run left every subtest of the suites in: an
// empty pattern or one without a "/" (which only selects subtests).
func wholeSuiteRan() bool {
	f := flag.Lookup("test.run")
	return f == nil || !strings.Contains(f.Value.String(), "/")
}
