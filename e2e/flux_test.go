//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// The Flux oracle: the real flux CLI v2.9.5 (built from the module proxy by
// hack/build-flux.sh) runs `flux diff kustomization NAME --path DIR`
// against the real API server, and its report is compared field by field
// with the Flux verdicts of `kubectl drift explain -o json`.
//
// What `flux diff` shows is exactly what kustomize-controller's SSA dry-run
// (fluxcd/pkg ssa manager_diff.go Diff, same ignore rules, ssa and
// reconcile selectors) changes. It does not simulate the managedFields
// cleanup that the controller runs before applying (kubectl's fields handed
// to kustomize-controller, kustomization_controller.go apply()), so a field
// only kubectl added, absent from the manifest, is Reverted for us but not
// in flux diff. Nor does it show the metadata cleanup's removal of kubectl's
// last-applied-configuration annotation (measured by TestFluxConformance
// with the real controller: it is removed). The expectation below encodes
// exactly that, and the test asserts each such field too.

// fluxTool is the flux CLI of this test binary.
var fluxTool toolOnce

// fluxCLI builds (once, cached in the user cache dir) and returns the flux
// binary, and installs the Kustomization and HelmRelease CRDs from the
// controllers' module zips.
func fluxCLI(t *testing.T) string {
	t.Helper()
	return fluxTool.get(t, "flux", func() error { return applyFluxCRDs(t, "drift-e2e-flux") })
}

// applyFluxCRDs applies the Kustomization and HelmRelease CRDs from the
// controllers' module zips to the shared cluster (server-side, as
// fieldManager) and waits until they are established.
func applyFluxCRDs(t *testing.T, fieldManager string) error {
	for _, mod := range []string{"github.com/fluxcd/kustomize-controller@v1.9.6", "github.com/fluxcd/helm-controller@v1.6.4"} {
		dir, err := moduleDir(mod)
		if err != nil {
			return err
		}
		crds, _ := filepath.Glob(filepath.Join(dir, "config", "crd", "bases", "*.yaml"))
		for _, crd := range crds {
			res := E.Run(t, RunOpts{}, filepath.Join(E.KubeBinDir, "kubectl"), "apply", "--server-side", "--force-conflicts", "--field-manager="+fieldManager, "-f", crd)
			if res.Code != 0 {
				return fmt.Errorf("installing %s: %s", crd, res.Stderr)
			}
		}
	}
	return E.WaitEstablished(t, "crd/kustomizations.kustomize.toolkit.fluxcd.io", "crd/helmreleases.helm.toolkit.fluxcd.io")
}

// fluxWrite writes a file below dir.
func fluxWrite(t *testing.T, dir, name, content string) string {
	t.Helper()
	return testutil.WriteFile(t, dir, name, content)
}

// fluxSetup is one Kustomization with its manifests, applied the way
// kustomize-controller applies them: built by `flux build kustomization`
// (which adds the ownership labels) and server-side applied with the
// kustomize-controller field manager.
type fluxSetup struct {
	ns, dir, ksFile, built string
}

func newFluxSetup(t *testing.T, ksSpec, manifests string) *fluxSetup {
	t.Helper()
	flux := fluxCLI(t)
	ns := E.Namespace(t, "flux")
	s := &fluxSetup{ns: ns, dir: t.TempDir()}
	sub := func(x string) string { return strings.ReplaceAll(x, "NS", ns) }
	s.ksFile = fluxWrite(t, s.dir, "ks.yaml", sub(fluxKustomization("NS", ksSpec)))
	fluxWrite(t, s.dir, "app/manifests.yaml", sub(manifests))
	E.Kubectl(t, "apply", "--server-side", "--field-manager=drift-e2e-flux", "-f", s.ksFile)
	res := E.Run(t, RunOpts{}, flux, "build", "kustomization", "apps", "-n", ns, "--path", filepath.Join(s.dir, "app"),
		"--kustomization-file", s.ksFile, "--dry-run")
	if res.Code != 0 {
		t.Fatalf("flux build: %s", res.Stderr)
	}
	s.built = fluxWrite(t, s.dir, "built.yaml", res.Stdout)
	E.Kubectl(t, "apply", "--server-side", "--field-manager=kustomize-controller", "-f", s.built)
	return s
}

// fluxDiff runs `flux diff kustomization` and returns, per object
// ("Kind/ns/name"), the dyff paths it reports, and the exit code.
func (s *fluxSetup) fluxDiff(t *testing.T) (map[string]map[string]bool, int) {
	t.Helper()
	res := E.Run(t, RunOpts{}, fluxCLI(t), "diff", "kustomization", "apps", "-n", s.ns, "--path", filepath.Join(s.dir, "app"))
	if res.Code > 1 {
		t.Fatalf("flux diff: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	return parseFluxDiff(res.Stdout), res.Code
}

var (
	ansi        = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	fluxObject  = regexp.MustCompile(`^► (\S+) (drifted|created|skipped|deleted)$`)
	entriesLine = regexp.MustCompile(`^[+-] .* (map|list) entr(y|ies) (added|removed):$`)
	childKey    = regexp.MustCompile(`^([^ :][^:]*):`)
)

// parseFluxDiff reads flux diff's dyff output: "► Kind/ns/name drifted",
// then blocks of a dot-style path and its change. "map entry added"
// blocks name their keys on the following lines: each becomes a path.
// List entry additions/removals keep the list path with a trailing "[]".
// dyff indents added entries by two spaces and removed ones not at all.
func parseFluxDiff(out string) map[string]map[string]bool {
	res := map[string]map[string]bool{}
	var obj, path string
	var inEntries bool
	entryIndent := -1
	for _, line := range strings.Split(ansi.ReplaceAllString(out, ""), "\n") {
		line = strings.TrimRight(line, " \r")
		if m := fluxObject.FindStringSubmatch(line); m != nil {
			obj, path = "", ""
			if m[2] == "drifted" {
				obj = m[1]
				res[obj] = map[string]bool{}
			}
			continue
		}
		if obj == "" {
			continue
		}
		switch {
		case line == "":
			path, inEntries = "", false
		case path == "":
			path = line
		case entriesLine.MatchString(line):
			if strings.Contains(line, "list entr") {
				res[obj][path+"[]"] = true
			} else {
				inEntries, entryIndent = true, -1
			}
		case strings.HasPrefix(line, "± "):
			res[obj][path] = true
		case inEntries:
			// Added entries are indented by two, removed ones are not;
			// deeper lines are the entries' own contents.
			indent := len(line) - len(strings.TrimLeft(line, " "))
			if entryIndent < 0 {
				entryIndent = indent
			}
			if m := childKey.FindStringSubmatch(line[indent:]); m != nil && indent == entryIndent {
				res[obj][path+"."+m[1]] = true
			}
		}
	}
	return res
}

// dyffPath renders a JSON pointer as dyff's dot-style path: map keys as
// they are, list items by their identifier field (name, key or id when
// every item has one, as dyff's named-entry lists), else by index. An
// invalid pointer (none of the reports' is) is returned as it is.
func dyffPath(obj map[string]any, pointer string) string {
	var parts []string
	var cur any = obj
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return pointer
	}
	for _, tok := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			parts = append(parts, tok)
			cur = c[tok]
		case []any:
			i, _ := strconv.Atoi(tok)
			name := tok
			for _, id := range []string{"name", "key", "id"} {
				all := true
				for _, it := range c {
					m, ok := it.(map[string]any)
					if !ok || m[id] == nil {
						all = false
						break
					}
				}
				if all && i < len(c) {
					name = fmt.Sprint(c[i].(map[string]any)[id])
					break
				}
			}
			parts = append(parts, name)
			if i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		default:
			parts = append(parts, tok)
			cur = nil
		}
	}
	return strings.Join(parts, ".")
}

// fluxReport runs explain for one object against the built manifests.
func (s *fluxSetup) fluxReport(t *testing.T, kind, name string) model.Report {
	t.Helper()
	res := E.Drift(t, "explain", kind+"/"+name, "-n", s.ns, "-f", s.built, "--engine", "flux", "-o", "json")
	if res.Code > 1 {
		t.Fatalf("explain %s/%s: exit %d\n%s%s", kind, name, res.Code, res.Stdout, res.Stderr)
	}
	var r model.Report
	DecodeJSON(t, res.Stdout, &r)
	return r
}

func fluxVerdict(d model.FieldDrift) *model.Verdict {
	for i := range d.Verdicts {
		if d.Verdicts[i].Engine == model.Engine("flux") {
			return &d.Verdicts[i]
		}
	}
	return nil
}

// shownByFluxDiff is what our verdict predicts flux diff prints: a field
// kustomize-controller's dry-run changes. Reverted-by-cleanup fields are
// the documented exception (see the package comment above).
func shownByFluxDiff(d model.FieldDrift, v *model.Verdict) bool {
	return v != nil && v.Kind == model.Reverted && !strings.Contains(v.Reason, "managedFields cleanup") && !strings.Contains(v.Reason, "metadata cleanup")
}

// oracleTally counts field comparisons over the whole run.
type oracleTally struct {
	mu           sync.Mutex
	cases, agree int
}

var tally oracleTally

func (o *oracleTally) add(ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cases++
	if ok {
		o.agree++
	}
}

// wantField is the verdict expected for one field, by dyff path.
type wantField struct {
	kind   model.VerdictKind
	reason string // substring of the reason
	rule   string // rule origin field, when a rule decides
	inFlux bool   // flux diff shows it
}

// compareWithFlux checks every drift of the object against flux diff and
// the expectations, and that flux diff shows nothing we do not report.
func compareWithFlux(t *testing.T, s *fluxSetup, diffs map[string]map[string]bool, kind, name string, want map[string]wantField) {
	t.Helper()
	r := s.fluxReport(t, kind, name)
	live := map[string]any{}
	DecodeJSON(t, E.Kubectl(t, "get", kind, name, "-n", s.ns, "-o", "json"), &live)
	desired := fluxDesired(t, s.built, kind, name)
	shown := diffs[kind+"/"+s.ns+"/"+name]
	delete(shown, "metadata.generation") // the dry-run bumps it; not drift
	seen := map[string]bool{}
	for _, d := range r.Drifts {
		src := live
		if d.Change == model.Removed {
			src = desired
		}
		p := dyffPath(src, d.Path)
		v := fluxVerdict(d)
		inFlux := shown[p] || shown[parentList(p)]
		seen[p], seen[parentList(p)] = true, true
		predicted := shownByFluxDiff(d, v)
		tally.add(predicted == inFlux)
		if predicted != inFlux {
			t.Errorf("%s %s (%s): our verdict %+v predicts flux diff shows=%v, flux diff shows=%v", kind, name, p, v, predicted, inFlux)
		}
		w, ok := want[p]
		if !ok {
			t.Errorf("%s %s: unexpected drift %s (%s) verdict %+v", kind, name, p, d.Path, v)
			continue
		}
		delete(want, p)
		if v == nil || v.Kind != w.kind || !strings.Contains(v.Reason, w.reason) || w.inFlux != inFlux {
			t.Errorf("%s %s %s: verdict %+v flux diff %v, want %s (%q) flux diff %v", kind, name, p, v, inFlux, w.kind, w.reason, w.inFlux)
		}
		if w.rule != "" && (v == nil || v.Rule == nil || v.Rule.Field != w.rule) {
			t.Errorf("%s %s %s: rule %+v, want %s", kind, name, p, v, w.rule)
		}
	}
	for p := range want {
		t.Errorf("%s %s: no drift reported at %s", kind, name, p)
	}
	for p := range shown {
		if !seen[p] {
			tally.add(false)
			t.Errorf("%s %s: flux diff shows %s, which we do not report", kind, name, p)
		}
	}
}

// parentList maps ".args.0" style paths to the "[]" key used for list
// entry additions (".args[]").
func parentList(p string) string {
	i := strings.LastIndex(p, ".")
	if i < 0 {
		return p + "[]"
	}
	return p[:i] + "[]"
}

// fluxDesired returns the built manifest of one object as JSON-like data.
func fluxDesired(t *testing.T, built, kind, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	for _, docText := range strings.Split(string(b), "\n---") {
		m := map[string]any{}
		if yaml.Unmarshal([]byte(docText), &m) != nil {
			continue
		}
		md, _ := m["metadata"].(map[string]any)
		if m["kind"] == kind && md != nil && md["name"] == name {
			return m
		}
	}
	t.Fatalf("%s/%s not in %s", kind, name, built)
	return nil
}

var fluxDeployment = deployWeb{Namespace: "NS", Labels: "app: web, tier: frontend", Annotations: "team: a",
	Replicas: 2, Image: "nginx:1", Env: "{name: MODE, value: prod}"}.YAML() + `---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: NS}
data: {a: "1", b: "2"}
`

// fluxAPIDeployment is a second Deployment for Strip/Adopt.
const fluxAPIDeployment = `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: NS, labels: {app: api}}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: app, image: "nginx:1"}]}
`

// TestFluxOracleOverride: no rules. kubectl edits, scale, labels, patches,
// another SSA manager forcing a manifest field, and fields added by other
// managers.
func TestFluxOracleOverride(t *testing.T) {
	s := newFluxSetup(t, "", fluxDeployment)
	ns := s.ns
	E.Kubectl(t, "-n", ns, "set", "image", "deployment/web", "app=nginx:2")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=5")
	E.KubectlWith(t, RunOpts{Env: []string{"KUBE_EDITOR=sed -i s/value:\\ prod/value:\\ debug/"}}, "-n", ns, "edit", "deployment/web")
	E.Kubectl(t, "-n", ns, "label", "deployment/web", "oncall=me")
	E.Kubectl(t, "-n", ns, "annotate", "deployment/web", "injected=x", "--field-manager=my-operator")
	E.Kubectl(t, "-n", ns, "patch", "configmap/cfg", "-p", `{"data":{"b":"3","c":"new"}}`)
	E.Apply(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: "+ns+"}\ndata: {a: \"9\", d: other}\n",
		"--server-side", "--force-conflicts", "--field-manager=other-ssa")
	E.Kubectl(t, "-n", ns, "label", "deployment/web", "tier-")
	E.Kubectl(t, "-n", ns, "patch", "deployment/web", "--type=json", "-p", `[{"op":"add","path":"/spec/template/spec/containers/0/args","value":["--debug"]}]`)

	diffs, code := s.fluxDiff(t)
	if code != 1 {
		t.Fatalf("flux diff exit %d, want 1", code)
	}
	compareWithFlux(t, s, diffs, "Deployment", "web", map[string]wantField{
		"spec.template.spec.containers.app.image": {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"spec.replicas": {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"spec.template.spec.containers.app.env.MODE.value": {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"metadata.labels.oncall":                           {kind: model.Reverted, reason: "managedFields cleanup", inFlux: false},
		"metadata.annotations.injected":                    {kind: model.LeftAlone, reason: "my-operator", inFlux: false},
		"metadata.labels.tier":                             {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"spec.template.spec.containers.app.args":           {kind: model.Reverted, reason: "managedFields cleanup", inFlux: false},
	})
	compareWithFlux(t, s, diffs, "ConfigMap", "cfg", map[string]wantField{
		"data.a": {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"data.b": {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"data.c": {kind: model.Reverted, reason: "managedFields cleanup", inFlux: false},
		"data.d": {kind: model.LeftAlone, reason: "other-ssa (Apply)", inFlux: false},
	})

	// --server-dry-run: the same verdicts, decided by the API server's
	// dry-run as kustomize-controller; nothing is persisted.
	rv := func() string {
		return E.Kubectl(t, "get", "deployment", "web", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}")
	}
	before := rv()
	plain := s.fluxReport(t, "Deployment", "web")
	args := []string{"explain", "deployment/web", "-n", ns, "-f", s.built, "--engine", "flux", "--server-dry-run", "-o", "json"}
	res := E.Drift(t, args...)
	if res.Code != 1 {
		t.Fatalf("explain --server-dry-run: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	var dry model.Report
	DecodeJSON(t, res.Stdout, &dry)
	if after := rv(); after != before {
		t.Errorf("--server-dry-run changed the object: resourceVersion %s -> %s", before, after)
	}
	kinds := map[string]model.VerdictKind{}
	for _, d := range plain.Drifts {
		if v := fluxVerdict(d); v != nil {
			kinds[d.Path] = v.Kind
		}
	}
	for _, d := range dry.Drifts {
		v := fluxVerdict(d)
		if v == nil || v.Kind != kinds[d.Path] {
			t.Errorf("--server-dry-run %s: %+v, without it %s", d.Path, v, kinds[d.Path])
		}
		if d.Path == "/spec/replicas" && (v == nil || !strings.Contains(v.Reason, "dry-run")) {
			t.Errorf("--server-dry-run replicas reason: %+v", v)
		}
	}
	// The read-only user may not patch: the dry-run fails with a note and
	// the verdicts fall back to the manifest.
	res = E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, args...)
	if res.Code != 1 {
		t.Fatalf("reader explain --server-dry-run: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	var ro model.Report
	DecodeJSON(t, res.Stdout, &ro)
	var failed bool
	for _, n := range ro.Notes {
		failed = failed || (n.Reason == "dry-run-failed" && strings.Contains(n.Message, "forbidden"))
	}
	if !failed || len(ro.Drifts) != len(plain.Drifts) {
		t.Errorf("reader: notes %+v, %d drifts (want %d)", ro.Notes, len(ro.Drifts), len(plain.Drifts))
	}
}

// TestFluxOracleIgnoreRules: .spec.ignore with and without target, a
// label-selector target, and targets that do not match.
func TestFluxOracleIgnoreRules(t *testing.T) {
	s := newFluxSetup(t, `  ignore:
  - paths: ["/spec/replicas"]
    target: {kind: Deployment, name: "web|api"}
  - paths: ["/data/b"]
  - paths: ["/metadata/annotations/team"]
    target: {labelSelector: "tier=frontend"}
  - paths: ["/spec/template/spec/containers/0/image"]
    target: {kind: StatefulSet}
  - paths: ["/data/a"]
    target: {labelSelector: "tier=db"}
`, fluxDeployment+fluxAPIDeployment)
	ns := s.ns
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=5")
	E.Kubectl(t, "-n", ns, "set", "image", "deployment/web", "app=nginx:2")
	E.Kubectl(t, "-n", ns, "annotate", "--overwrite", "deployment/web", "team=b")
	E.Kubectl(t, "-n", ns, "patch", "configmap/cfg", "-p", `{"data":{"a":"7","b":"3"}}`)
	// An autoscaler that applies replicas server-side: Strip, not Adopt.
	E.Apply(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: "+ns+"}\nspec: {replicas: 7}\n",
		"--server-side", "--force-conflicts", "--field-manager=hpa-ssa")

	diffs, _ := s.fluxDiff(t)
	compareWithFlux(t, s, diffs, "Deployment", "web", map[string]wantField{
		"spec.replicas":                           {kind: model.Ignored, reason: "Adopt", rule: ".spec.ignore[0]"},
		"metadata.annotations.team":               {kind: model.Ignored, reason: "ignored by", rule: ".spec.ignore[2]"},
		"spec.template.spec.containers.app.image": {kind: model.Reverted, reason: "force-applies", inFlux: true},
	})
	compareWithFlux(t, s, diffs, "ConfigMap", "cfg", map[string]wantField{
		"data.a": {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"data.b": {kind: model.Ignored, reason: "ignored by", rule: ".spec.ignore[1]"},
	})
	compareWithFlux(t, s, diffs, "Deployment", "api", map[string]wantField{
		"spec.replicas": {kind: model.Ignored, reason: "Strip: hpa-ssa also applies it", rule: ".spec.ignore[0]"},
	})
}

// TestFluxOracleSSAMarks: ssa Merge/Ignore/IfNotPresent, an unknown ssa
// value, and reconcile: disabled.
func TestFluxOracleSSAMarks(t *testing.T) {
	cm := func(name, key, value string) string {
		return fmt.Sprintf(`---
apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: NS
  annotations: {%q: %s}
data: {a: "1"}
`, name, key, value)
	}
	s := newFluxSetup(t, "", cm("merge", "kustomize.toolkit.fluxcd.io/ssa", "Merge")+
		cm("ignore", "kustomize.toolkit.fluxcd.io/ssa", "Ignore")+
		cm("ifnotpresent", "kustomize.toolkit.fluxcd.io/ssa", "IfNotPresent")+
		cm("unknown", "kustomize.toolkit.fluxcd.io/ssa", "Replace")+
		cm("reconcile", "kustomize.toolkit.fluxcd.io/reconcile", "disabled"))
	ns := s.ns
	for _, name := range []string{"merge", "ignore", "ifnotpresent", "unknown", "reconcile"} {
		E.Kubectl(t, "-n", ns, "patch", "configmap/"+name, "-p", `{"data":{"a":"2","extra":"x"}}`)
	}
	diffs, _ := s.fluxDiff(t)
	compareWithFlux(t, s, diffs, "ConfigMap", "merge", map[string]wantField{
		"data.a":     {kind: model.Reverted, reason: "Merge only keeps", inFlux: true},
		"data.extra": {kind: model.LeftAlone, reason: "kept by annotation", inFlux: false},
	})
	for _, name := range []string{"ignore", "ifnotpresent", "reconcile"} {
		compareWithFlux(t, s, diffs, "ConfigMap", name, map[string]wantField{
			"data.a":     {kind: model.NotApplied, reason: "kustomize.toolkit.fluxcd.io/"},
			"data.extra": {kind: model.NotApplied, reason: "kustomize.toolkit.fluxcd.io/"},
		})
	}
	compareWithFlux(t, s, diffs, "ConfigMap", "unknown", map[string]wantField{
		"data.a":     {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"data.extra": {kind: model.Reverted, reason: "managedFields cleanup"},
	})
	r := s.fluxReport(t, "ConfigMap", "unknown")
	found := false
	for _, n := range r.Notes {
		found = found || (n.Reason == "unknown-ssa-value" && strings.Contains(n.Message, "treats it as Override"))
	}
	if !found {
		t.Errorf("no unknown-ssa-value note: %+v", r.Notes)
	}
}

// TestFluxOracleBadRules: rules Flux cannot use. An invalid pointer and
// the "" path remove nothing in kustomize-controller (json-patch with
// AllowMissingPathOnRemove): flux diff still shows the field, and we
// revert it with an error note on the rule. An invalid regex makes Flux
// fail outright (jsondiff.CompileIgnoreRules): flux diff errors, and our
// note says the controller fails until it is fixed.
func TestFluxOracleBadRules(t *testing.T) {
	s := newFluxSetup(t, `  ignore:
  - paths: ["spec/replicas", "/spec/template/spec/containers/0/ima~2ge"]
    target: {kind: Deployment}
  - paths: [""]
    target: {kind: ConfigMap}
`, fluxDeployment)
	E.Kubectl(t, "-n", s.ns, "scale", "deployment/web", "--replicas=5")
	E.Kubectl(t, "-n", s.ns, "set", "image", "deployment/web", "app=nginx:2")
	E.Kubectl(t, "-n", s.ns, "patch", "configmap/cfg", "-p", `{"data":{"b":"3"}}`)
	diffs, _ := s.fluxDiff(t)
	compareWithFlux(t, s, diffs, "Deployment", "web", map[string]wantField{
		"spec.replicas": {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"spec.template.spec.containers.app.image": {kind: model.Reverted, reason: "force-applies", inFlux: true},
	})
	compareWithFlux(t, s, diffs, "ConfigMap", "cfg", map[string]wantField{
		"data.b": {kind: model.Reverted, reason: "force-applies", inFlux: true},
	})
	notes := func(r model.Report, reason string) int {
		n := 0
		for _, x := range r.Notes {
			if x.Reason == reason && x.Level == model.NoteError && x.Rule != nil {
				n++
			}
		}
		return n
	}
	if n := notes(s.fluxReport(t, "Deployment", "web"), "invalid-pointer"); n != 2 {
		t.Errorf("Deployment: %d invalid-pointer notes, want 2", n)
	}
	if n := notes(s.fluxReport(t, "ConfigMap", "cfg"), "invalid-pointer"); n != 1 {
		t.Errorf("ConfigMap: %d invalid-pointer notes for the \"\" path, want 1", n)
	}

	bad := newFluxSetup(t, `  ignore:
  - paths: ["/spec/replicas"]
    target: {kind: "Deploy(ment"}
  - paths: ["/data/b"]
`, fluxDeployment)
	E.Kubectl(t, "-n", bad.ns, "patch", "configmap/cfg", "-p", `{"data":{"a":"5","b":"3"}}`)
	res := E.Run(t, RunOpts{}, fluxCLI(t), "diff", "kustomization", "apps", "-n", bad.ns, "--path", filepath.Join(bad.dir, "app"))
	fluxFails := res.Code > 1 && strings.Contains(res.Stdout+res.Stderr, "invalid kind regex")
	r := bad.fluxReport(t, "ConfigMap", "cfg")
	var weSay bool
	for _, n := range r.Notes {
		weSay = weSay || (n.Reason == "invalid-regex" && n.Level == model.NoteError && n.Rule != nil &&
			n.Rule.Field == ".spec.ignore[0]" && strings.Contains(n.Message, "fails the whole apply"))
	}
	tally.add(fluxFails == weSay)
	if !fluxFails || !weSay {
		t.Errorf("invalid regex: flux diff fails=%v (exit %d: %s%s), our error note=%v (%+v)", fluxFails, res.Code, res.Stdout, res.Stderr, weSay, r.Notes)
	}
	for _, d := range r.Drifts {
		v := fluxVerdict(d)
		if v == nil || !strings.Contains(v.Reason, "until then the controller fails") && v.Kind != model.Ignored {
			t.Errorf("%s: %+v lacks the invalid-rule caveat", d.Path, v)
		}
	}
}

// TestFluxOracleSelectorsAndOwnership: annotation-selector, namespace,
// group/version/kind regex targets; a field kustomize-controller owns that
// left the manifest (its apply removes it); a client-side kubectl apply
// (kubectl-client-side-apply manager and the last-applied annotation that
// the controller's cleanup strips).
func TestFluxOracleSelectorsAndOwnership(t *testing.T) {
	s := newFluxSetup(t, `  ignore:
  - paths: ["/spec/template/spec/containers/0/image"]
    target: {annotationSelector: "team=a"}
  - paths: ["/spec/replicas"]
    target: {namespace: "other-.*"}
  - paths: ["/spec/template/spec/containers/0/env"]
    target: {group: "apps", version: "v1", kind: "Deploy.*"}
  - paths: ["/data/a"]
    target: {group: "apps"}
`, fluxDeployment)
	ns := s.ns
	E.Kubectl(t, "-n", ns, "set", "image", "deployment/web", "app=nginx:2")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=3")
	E.Kubectl(t, "-n", ns, "set", "env", "deployment/web", "MODE=debug")
	// kustomize-controller applied a key that has since left the manifest.
	built := fluxDesired(t, s.built, "ConfigMap", "cfg")
	data := built["data"].(map[string]any)
	data["z"] = "old"
	b, _ := json.Marshal(built)
	E.Apply(t, string(b), "--server-side", "--field-manager=kustomize-controller")
	// A client-side kubectl apply of a changed value.
	E.Apply(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: "+ns+"}\ndata: {a: \"5\", b: \"2\"}\n")

	diffs, _ := s.fluxDiff(t)
	compareWithFlux(t, s, diffs, "Deployment", "web", map[string]wantField{
		"spec.template.spec.containers.app.image": {kind: model.Ignored, reason: "ignored by", rule: ".spec.ignore[0]"},
		"spec.replicas": {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"spec.template.spec.containers.app.env.MODE.value": {kind: model.Ignored, reason: "ignored by", rule: ".spec.ignore[2]"},
	})
	compareWithFlux(t, s, diffs, "ConfigMap", "cfg", map[string]wantField{
		"data.a": {kind: model.Reverted, reason: "force-applies", inFlux: true},
		"data.z": {kind: model.Reverted, reason: "no longer in the manifest", inFlux: true},
		"metadata.annotations.kubectl.kubernetes.io/last-applied-configuration": {kind: model.Reverted, reason: "metadata cleanup", inFlux: false},
	})
	notes := func(kind, name string) map[string]string {
		reasons := map[string]string{}
		for _, n := range s.fluxReport(t, kind, name).Notes {
			if n.Rule != nil {
				reasons[n.Rule.Field] = n.Reason
			}
		}
		return reasons
	}
	// Rule 3 (group apps) targets the Deployment, which has no /data/a.
	if r := notes("Deployment", "web"); r[".spec.ignore[1]"] != "namespace-mismatch" || r[".spec.ignore[3]"] != "pointer-absent" {
		t.Errorf("Deployment notes: %v", r)
	}
	if r := notes("ConfigMap", "cfg"); r[".spec.ignore[3]"] != "group-mismatch" || r[".spec.ignore[0]"] != "annotation-selector-mismatch" {
		t.Errorf("ConfigMap notes: %v", r)
	}
}

// TestFluxOracleTally prints the oracle figures after the other oracle
// tests (go test runs tests in source order).
func TestFluxOracleTally(t *testing.T) {
	tally.mu.Lock()
	defer tally.mu.Unlock()
	if tally.cases == 0 {
		t.Skip("no oracle cases ran (-run filtered them out)")
	}
	t.Logf("flux oracle: %d field comparisons, %d agree with flux diff kustomization (flux v2.9.5)", tally.cases, tally.agree)
	if tally.agree != tally.cases {
		t.Errorf("%d disagreements", tally.cases-tally.agree)
	}
}

// TestFluxHelmReleaseAcceptance: a HelmRelease with driftDetection warn and
// ignore rules exists as an object; its resources are applied with
// helm-controller's field manager and ownership labels, then drifted by
// kubectl. explain -o json gives each field's Flux verdict, reason and
// rule origin (from the cluster object, and with --rules from the file,
// with its line).
func TestFluxHelmReleaseAcceptance(t *testing.T) {
	fluxCLI(t)
	ns := E.Namespace(t, "flux")
	dir := t.TempDir()
	hr := strings.ReplaceAll(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: NS}
spec:
  interval: 30m
  chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: charts}}}
  driftDetection:
    mode: warn
    ignore:
    - paths: ["/spec/replicas"]
      target: {kind: Deployment}
    - paths: [""]
      target: {kind: ConfigMap, name: "scratch-.*"}
    - paths: ["/data/never"]
      target: {kind: Secret}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: quiet, namespace: NS}
spec:
  interval: 1h
  chart: {spec: {chart: quiet, sourceRef: {kind: HelmRepository, name: charts}}}
`, "NS", ns)
	hrFile := fluxWrite(t, dir, "hr.yaml", hr)
	E.Kubectl(t, "apply", "--server-side", "--field-manager=drift-e2e-flux", "-f", hrFile)
	labels := func(rel string) string {
		return fmt.Sprintf("{app.kubernetes.io/managed-by: Helm, helm.toolkit.fluxcd.io/name: %s, helm.toolkit.fluxcd.io/namespace: %s}", rel, ns)
	}
	manifests := strings.ReplaceAll(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS, labels: LABELS}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "nginx:1"}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: scratch-1, namespace: NS, labels: LABELS}
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: optout, namespace: NS, labels: LABELS, annotations: {helm.toolkit.fluxcd.io/driftDetection: disabled}}
data: {a: "1"}
`, "LABELS", labels("web"))
	manifests = strings.ReplaceAll(manifests, "NS", ns) + strings.ReplaceAll(strings.ReplaceAll(`---
apiVersion: v1
kind: ConfigMap
metadata: {name: quiet, namespace: NS, labels: LABELS}
data: {a: "1"}
`, "LABELS", labels("quiet")), "NS", ns)
	built := fluxWrite(t, dir, "release.yaml", manifests)
	E.Kubectl(t, "apply", "--server-side", "--field-manager=helm-controller", "-f", built)

	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=4")
	E.Kubectl(t, "-n", ns, "set", "image", "deployment/web", "app=nginx:2")
	E.Kubectl(t, "-n", ns, "label", "deployment/web", "oncall=me")
	for _, cm := range []string{"scratch-1", "optout", "quiet"} {
		E.Kubectl(t, "-n", ns, "patch", "configmap/"+cm, "-p", `{"data":{"a":"2"}}`)
	}

	type want struct {
		kind          model.VerdictKind
		reason, field string
	}
	check := func(t *testing.T, r model.Report, wants map[string]want, ruleFile string) {
		t.Helper()
		got := map[string]model.FieldDrift{}
		for _, d := range r.Drifts {
			got[d.Path] = d
		}
		for path, w := range wants {
			d, ok := got[path]
			if !ok {
				t.Errorf("%s: no drift at %s; drifts %+v", r.Resource.Name, path, r.Drifts)
				continue
			}
			v := fluxVerdict(d)
			if v == nil || v.Kind != w.kind || !strings.Contains(v.Reason, w.reason) {
				t.Errorf("%s %s: verdict %+v, want %s containing %q", r.Resource.Name, path, v, w.kind, w.reason)
				continue
			}
			if w.field != "" {
				if v.Rule == nil || v.Rule.Field != w.field || v.Rule.Object != "HelmRelease "+ns+"/web" {
					t.Errorf("%s %s: rule %+v, want HelmRelease %s/web %s", r.Resource.Name, path, v.Rule, ns, w.field)
				} else if ruleFile != "" && (v.Rule.File != ruleFile || v.Rule.Line == 0) {
					t.Errorf("%s %s: rule origin %+v, want file %s with a line", r.Resource.Name, path, v.Rule, ruleFile)
				}
			}
		}
		if len(r.Owners) == 0 || r.Owners[0].Kind != "HelmRelease" || !r.Owners[0].Found {
			t.Errorf("%s: owners %+v", r.Resource.Name, r.Owners)
		}
	}
	// explain wants exit 1 (drift) unless every field is ignored (0).
	explain := func(t *testing.T, name string, wantCode int, extra ...string) model.Report {
		t.Helper()
		args := append([]string{"explain", name, "-n", ns, "-f", built, "--engine", "flux", "-o", "json"}, extra...)
		res := E.Drift(t, args...)
		if res.Code != wantCode {
			t.Fatalf("explain %s: exit %d, want %d\n%s%s", name, res.Code, wantCode, res.Stdout, res.Stderr)
		}
		var r model.Report
		DecodeJSON(t, res.Stdout, &r)
		return r
	}
	webWants := map[string]want{
		"/spec/replicas":                         {kind: model.Ignored, reason: "ignored by", field: ".spec.driftDetection.ignore[0]"},
		"/spec/template/spec/containers/0/image": {kind: model.Reported, reason: "mode: warn"},
		"/metadata/labels/oncall":                {kind: model.LeftAlone, reason: "not set by the release manifest"},
	}
	for _, withRules := range []bool{false, true} {
		t.Run(fmt.Sprintf("rules-from-file=%v", withRules), func(t *testing.T) {
			var extra []string
			ruleFile := ""
			if withRules {
				extra, ruleFile = []string{"--rules", hrFile}, hrFile
			}
			r := explain(t, "deployment/web", 1, extra...)
			check(t, r, webWants, ruleFile)
			if r.Owners[0].DriftDetection != "warn" || r.Owners[0].Interval != "30m" {
				t.Errorf("owner %+v", r.Owners[0])
			}
			var noted bool
			for _, n := range r.Notes {
				noted = noted || (n.Reason == "kind-mismatch" && n.Rule != nil && n.Rule.Field == ".spec.driftDetection.ignore[2]")
			}
			if !noted {
				t.Errorf("no kind-mismatch note for .spec.driftDetection.ignore[2]: %+v", r.Notes)
			}
			check(t, explain(t, "configmap/scratch-1", 0, extra...), map[string]want{
				"/data/a": {kind: model.Ignored, reason: "the whole object", field: ".spec.driftDetection.ignore[1]"},
			}, ruleFile)
		})
	}
	// Not watched by helm-controller: no engine acts, exit 0 (issue 20).
	check(t, explain(t, "configmap/optout", 0), map[string]want{
		"/data/a": {kind: model.NotWatched, reason: "helm.toolkit.fluxcd.io/driftDetection: disabled"},
	}, "")
	r := explain(t, "configmap/quiet", 0)
	if d := r.Drifts; len(d) != 1 || fluxVerdict(d[0]) == nil || fluxVerdict(d[0]).Kind != model.NotWatched || !strings.Contains(fluxVerdict(d[0]).Reason, "the default") {
		t.Errorf("quiet: %+v", r.Drifts)
	}
}
