//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// TestFluxConformance proves the Flux verdicts against the running
// controllers. Each scenario applies its manifests through the real
// kustomize-controller (or helm-controller), drifts the objects with real
// clients, records the tool's verdicts in the three modes (inferred from
// managedFields, -f with the Git manifest, -f with --server-dry-run), lets
// the controller reconcile twice, and compares:
//
//   - every field the tool named: `reverted` must have been changed by the
//     controller; every other verdict (ignored, left-alone, not-applied,
//     reported...) must have stayed;
//   - every field the controller changed must have been named.
//
// Disagreements fail the test unless listed, with their reason, in
// testdata/flux-known-divergences; an entry may never excuse a false
// `reverted` in the -f or --server-dry-run modes.

// Modes of explain compared by the suite.
const (
	modeInferred = "inferred"
	modeFile     = "file"
	modeDryRun   = "server-dry-run"
)

var fxModes = []string{modeInferred, modeFile, modeDryRun}

var (
	gvrDeploy = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrSTS    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	gvrSvc    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	gvrCM     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrSecret = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	gvrWidget = schema.GroupVersionResource{Group: "lab.drift.test", Version: "v1", Resource: "widgets"}
)

// fxObj is one object a scenario judges.
type fxObj struct {
	gvr schema.GroupVersionResource
	// ref is what explain takes: "deployment/web".
	ref string
}

func (o fxObj) name() string { _, n, _ := strings.Cut(o.ref, "/"); return n }

var (
	objDeploy = fxObj{gvrDeploy, "deployment/web"}
	objSTS    = fxObj{gvrSTS, "statefulset/db"}
	objSvc    = fxObj{gvrSvc, "service/web"}
	objCM     = fxObj{gvrCM, "configmap/cfg"}
	objSecret = fxObj{gvrSecret, "secret/sec"}
	objWidget = fxObj{gvrWidget, "widget.lab.drift.test/w"}
)

// fxCtx is what a scenario's drift step gets.
type fxCtx struct {
	t  *testing.T
	l  *fluxLab
	ns string
}

// k runs kubectl in the scenario's namespace on the lab API server.
func (c *fxCtx) k(args ...string) string {
	c.t.Helper()
	return c.l.kubectl(c.t, RunOpts{}, append(args, "-n", c.ns)...)
}

// edit makes a real `kubectl edit` with a sed script as the editor.
func (c *fxCtx) edit(ref, sedExpr string) {
	c.t.Helper()
	c.l.kubectl(c.t, RunOpts{Env: []string{"KUBE_EDITOR=sed -i " + sedExpr}}, "edit", ref, "-n", c.ns)
}

// applySS runs `kubectl apply --server-side` of a manifest (NS replaced)
// as another field manager.
func (c *fxCtx) applySS(manager, manifest string, force bool) {
	c.t.Helper()
	args := []string{"apply", "--server-side", "--field-manager=" + manager, "-f", "-", "-n", c.ns}
	if force {
		args = append(args, "--force-conflicts")
	}
	c.l.kubectl(c.t, RunOpts{Stdin: []byte(strings.ReplaceAll(manifest, "NS", c.ns))}, args...)
}

// fxScenario is one conformance case.
type fxScenario struct {
	name string
	// helm: git is the chart's templates (one file) and hrSpec the
	// HelmRelease's extra spec; else git is the Kustomization's manifests
	// (NS is the namespace) and ksSpec its extra spec.
	helm          bool
	git           string
	ksSpec        string
	hrSpec        string
	drift         func(c *fxCtx)
	objects       []fxObj
	suspendBefore bool
	// webhook, when set, registers the lab's mutating webhook with this
	// mutation for the scenario's namespace before Flux creates anything.
	webhook string
	// gitNext, when set, is a second commit published after the first
	// apply (a mark that would stop the object's creation, such as
	// reconcile: disabled, can only be added to an existing object); it
	// is then the Git manifest given to -f.
	gitNext string
}

// --- manifests ------------------------------------------------------------

// fxWeb is the Deployment most scenarios put in Git.
var fxWeb = deployWeb{Namespace: "NS", Labels: "app: web", Replicas: 2, Image: "nginx:1.25",
	Env: "{name: MODE, value: prod}", Ports: "{containerPort: 80}"}

var fxDeploy = fxWeb.YAML()

// fxDeployNoReplicas leaves replicas to others (an HPA, a /scale writer).
var fxDeployNoReplicas = deployWeb{Namespace: "NS", Labels: "app: web", Image: "nginx:1.25"}.YAML()

const fxService = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS, labels: {app: web}}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
`

const fxConfigMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: NS}
data: {color: blue, size: "3"}
`

const fxSecret = `apiVersion: v1
kind: Secret
metadata: {name: sec, namespace: NS}
type: Opaque
data: {password: aHVudGVyMg==}
`

const fxStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: NS}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - {name: db, image: postgres:16}
`

const fxWidget = `apiVersion: lab.drift.test/v1
kind: Widget
metadata: {name: w, namespace: NS}
spec: {size: 3, color: blue, tags: [a, b]}
`

// fxDeployAnnotated is fxDeploy with annotations (the body of a flow map).
func fxDeployAnnotated(ann string) string {
	d := fxWeb
	d.Annotations = ann
	return d.YAML()
}

func docs(ds ...string) string { return strings.Join(ds, "---\n") }

// Helm chart templates: plain YAML (Helm renders it unchanged); no
// namespace, Helm installs into the release namespace.
var fxChart = docs(chartWeb(), strings.Replace(fxConfigMap, ", namespace: NS", "", 1))

func chartWeb() string {
	d := fxWeb
	d.Namespace = ""
	return d.YAML()
}

func fxScenarios() []fxScenario {
	dep := []fxObj{objDeploy}
	var s []fxScenario
	add := func(sc fxScenario) { s = append(s, sc) }

	// --- kustomize-controller: manual edits with kubectl ---
	add(fxScenario{name: "no-drift-deploy-service", git: docs(fxDeploy, fxService), objects: []fxObj{objDeploy, objSvc},
		drift: func(c *fxCtx) {}})
	add(fxScenario{name: "edit-image", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) { c.edit("deployment/web", "s/nginx:1.25/nginx:1.26/") }})
	add(fxScenario{name: "patch-env", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) {
			c.k("patch", "deployment/web", "--type=json", "-p", `[{"op":"replace","path":"/spec/template/spec/containers/0/env/0/value","value":"debug"}]`)
		}})
	add(fxScenario{name: "scale-replicas-in-git", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) { c.k("scale", "deployment/web", "--replicas=5") }})
	add(fxScenario{name: "scale-subresource-kcm-replicas-in-git", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) {
			c.k("patch", "deployment/web", "--subresource=scale", "--type=merge", "-p", `{"spec":{"replicas":4}}`, "--field-manager=kube-controller-manager")
		}})
	add(fxScenario{name: "scale-subresource-kcm-no-replicas-in-git", git: fxDeployNoReplicas, objects: dep,
		drift: func(c *fxCtx) {
			c.k("patch", "deployment/web", "--subresource=scale", "--type=merge", "-p", `{"spec":{"replicas":4}}`, "--field-manager=kube-controller-manager")
		}})
	add(fxScenario{name: "scale-no-replicas-in-git", git: fxDeployNoReplicas, objects: dep,
		drift: func(c *fxCtx) { c.k("scale", "deployment/web", "--replicas=3") }})
	add(fxScenario{name: "label-added", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) { c.k("label", "deployment/web", "team=payments") }})
	add(fxScenario{name: "annotate-added", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) { c.k("annotate", "deployment/web", "oncall=alice") }})
	add(fxScenario{name: "set-image", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) { c.k("set", "image", "deployment/web", "app=nginx:1.27") }})
	add(fxScenario{name: "rollout-restart", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) { c.k("rollout", "restart", "deployment/web") }})
	add(fxScenario{name: "edit-removes-git-label", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) { c.k("label", "deployment/web", "app-") }})
	add(fxScenario{name: "client-side-apply", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) {
			c.l.kubectl(c.t, RunOpts{Stdin: []byte(strings.ReplaceAll(strings.ReplaceAll(fxDeploy, "NS", c.ns), "replicas: 2", "replicas: 3"))}, "apply", "-f", "-")
		}})

	// --- a real mutating webhook (flux_webhook_test.go) ---
	// The sidecar it injects is in no manifest; a user edits its image.
	add(fxScenario{name: "webhook-sidecar-edited", git: fxDeploy, objects: dep, webhook: whSidecar,
		drift: func(c *fxCtx) { c.edit("deployment/web", "s/busybox:1.36/busybox:1.37/") }})
	// The env var it adds to the Git container; a user edits its value.
	add(fxScenario{name: "webhook-env-edited", git: fxDeploy, objects: dep, webhook: whEnv,
		drift: func(c *fxCtx) { c.edit("deployment/web", "s/from-webhook/by-hand/") }})
	// Git sets imagePullPolicy: IfNotPresent; the webhook writes Always on
	// every write: nobody drifts anything by hand.
	add(fxScenario{name: "webhook-overwrites-git-field", objects: dep, webhook: whPullPolicy,
		git:   strings.Replace(fxDeploy, "        image: nginx:1.25\n", "        image: nginx:1.25\n        imagePullPolicy: IfNotPresent\n", 1),
		drift: func(c *fxCtx) {}})

	// --- other managers ---
	add(fxScenario{name: "ssa-other-manager-new-field", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) {
			c.applySS("ops-team", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS, labels: {cost-center: "42"}}
`, false)
		}})
	add(fxScenario{name: "ssa-other-manager-git-field", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) {
			c.applySS("ops-team", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec: {replicas: 7, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: nginx:1.25}]}}}
`, true)
		}})
	add(fxScenario{name: "kubectl-ssa-default-manager", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) {
			c.applySS("kubectl", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS, annotations: {note: by-hand}}
`, false)
		}})
	add(fxScenario{name: "operator-new-annotation", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) {
			c.k("patch", "deployment/web", "--type=merge", "-p", `{"metadata":{"annotations":{"acme.io/checksum":"abc"}}}`, "--field-manager=acme-operator")
		}})
	add(fxScenario{name: "operator-git-field", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) {
			c.k("patch", "deployment/web", "--type=merge", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:op"}]}}}}`, "--field-manager=acme-operator")
		}})

	// --- .spec.ignore ---
	scale := func(c *fxCtx) { c.k("scale", "deployment/web", "--replicas=6") }
	// Each row drifts by scale (or its own drift) and ignores paths
	// (/spec/replicas unless set) for the target (none when "").
	for _, ig := range []struct {
		name, target, paths, git string
		drift                    func(c *fxCtx)
	}{
		{name: "ignore-no-target"},
		{name: "ignore-name-regex", target: `name: "w.b"`},
		{name: "ignore-name-regex-miss", target: `name: "we"`},
		{name: "ignore-label-selector", target: `labelSelector: "app=web"`},
		{name: "ignore-annotation-selector-git", target: `annotationSelector: "drift.test/scaled=yes"`,
			git: fxDeployAnnotated(`drift.test/scaled: "yes"`)},
		{name: "ignore-annotation-selector-runtime", target: `annotationSelector: "drift.test/scaled=yes"`,
			drift: func(c *fxCtx) {
				c.k("annotate", "deployment/web", "drift.test/scaled=yes")
				scale(c)
			}},
		{name: "ignore-kind-group-version", target: "group: apps, version: v1, kind: Deployment"},
		{name: "ignore-kind-miss", target: "kind: StatefulSet"},
		{name: "ignore-image-path", target: "kind: Deployment", paths: "/spec/template/spec/containers/0/image",
			drift: func(c *fxCtx) { c.k("set", "image", "deployment/web", "app=nginx:ignored") }},
	} {
		sc := fxScenario{name: ig.name, git: ig.git, objects: dep, drift: ig.drift}
		if sc.git == "" {
			sc.git = fxDeploy
		}
		if sc.drift == nil {
			sc.drift = scale
		}
		if ig.paths == "" {
			ig.paths = "/spec/replicas"
		}
		sc.ksSpec = "ignore:\n- paths: [" + ig.paths + "]\n"
		if ig.target != "" {
			sc.ksSpec += "  target: {" + ig.target + "}\n"
		}
		add(sc)
	}

	// --- ssa marks ---
	editImage := func(c *fxCtx) { c.edit("deployment/web", "s/nginx:1.25/nginx:1.26/") }
	labelAndEdit := func(c *fxCtx) {
		c.k("label", "deployment/web", "team=payments")
		editImage(c)
	}
	for _, mode := range []string{"Override", "Merge", "IfNotPresent", "Ignore"} {
		sc := fxScenario{name: "ssa-" + strings.ToLower(mode) + "-in-git", git: fxDeployAnnotated("kustomize.toolkit.fluxcd.io/ssa: " + mode), objects: dep, drift: labelAndEdit}
		if mode == "Ignore" {
			// ssa: Ignore also skips the creation: mark an existing object.
			sc.git, sc.gitNext = fxDeploy, sc.git
		}
		add(sc)
	}
	for _, mode := range []string{"Override", "Merge", "IfNotPresent", "Ignore"} {
		add(fxScenario{name: "ssa-" + strings.ToLower(mode) + "-at-runtime", git: fxDeploy, objects: dep,
			drift: func(c *fxCtx) {
				c.k("annotate", "deployment/web", "kustomize.toolkit.fluxcd.io/ssa="+mode)
				labelAndEdit(c)
			}})
	}

	// --- reconcile: disabled, suspend ---
	add(fxScenario{name: "reconcile-disabled-label-runtime", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) {
			c.k("label", "deployment/web", "kustomize.toolkit.fluxcd.io/reconcile=disabled")
			editImage(c)
		}})
	add(fxScenario{name: "reconcile-disabled-annotation-runtime", git: fxDeploy, objects: dep,
		drift: func(c *fxCtx) {
			c.k("annotate", "deployment/web", "kustomize.toolkit.fluxcd.io/reconcile=disabled")
			editImage(c)
		}})
	add(fxScenario{name: "reconcile-disabled-in-git", git: fxDeploy, gitNext: fxDeployAnnotated("kustomize.toolkit.fluxcd.io/reconcile: disabled"), objects: dep, drift: editImage})
	add(fxScenario{name: "suspended-kustomization", git: fxDeploy, objects: dep, drift: labelAndEdit, suspendBefore: true})

	// --- other kinds ---
	add(fxScenario{name: "secret-data-edit", git: fxSecret, objects: []fxObj{objSecret},
		drift: func(c *fxCtx) {
			c.k("patch", "secret/sec", "--type=merge", "-p", `{"data":{"password":"b3RoZXI="}}`)
		}})
	add(fxScenario{name: "secret-key-added", git: fxSecret, objects: []fxObj{objSecret},
		drift: func(c *fxCtx) {
			c.k("patch", "secret/sec", "--type=merge", "-p", `{"data":{"token":"c2VjcmV0"}}`)
		}})
	add(fxScenario{name: "configmap-edit", git: fxConfigMap, objects: []fxObj{objCM},
		drift: func(c *fxCtx) { c.edit("configmap/cfg", "s/blue/red/") }})
	add(fxScenario{name: "configmap-key-added-by-operator", git: fxConfigMap, objects: []fxObj{objCM},
		drift: func(c *fxCtx) {
			c.k("patch", "configmap/cfg", "--type=merge", "-p", `{"data":{"extra":"x"}}`, "--field-manager=acme-operator")
		}})
	add(fxScenario{name: "service-port-edit", git: fxService, objects: []fxObj{objSvc},
		drift: func(c *fxCtx) {
			c.k("patch", "service/web", "--type=json", "-p", `[{"op":"replace","path":"/spec/ports/0/targetPort","value":9090}]`)
		}})
	add(fxScenario{name: "service-label-operator", git: fxService, objects: []fxObj{objSvc},
		drift: func(c *fxCtx) {
			c.k("label", "service/web", "mesh=on", "--field-manager=mesh-operator")
		}})
	add(fxScenario{name: "statefulset-scale", git: fxStatefulSet, objects: []fxObj{objSTS},
		drift: func(c *fxCtx) { c.k("scale", "statefulset/db", "--replicas=3") }})
	add(fxScenario{name: "statefulset-image", git: fxStatefulSet, objects: []fxObj{objSTS},
		drift: func(c *fxCtx) { c.k("set", "image", "statefulset/db", "db=postgres:17") }})
	add(fxScenario{name: "crd-object-edit", git: fxWidget, objects: []fxObj{objWidget},
		drift: func(c *fxCtx) { c.edit("widget.lab.drift.test/w", "s/blue/green/") }})
	add(fxScenario{name: "crd-object-list-and-new-field", git: fxWidget, objects: []fxObj{objWidget},
		drift: func(c *fxCtx) {
			c.k("patch", "widget.lab.drift.test/w", "--type=merge", "-p", `{"spec":{"tags":["a","b","c"]}}`)
			c.k("patch", "widget.lab.drift.test/w", "--type=merge", "-p", `{"spec":{"owner":"ops"}}`, "--field-manager=acme-operator")
		}})

	// --- helm-controller ---
	hdep := []fxObj{objDeploy}
	hEdit := func(c *fxCtx) { c.edit("deployment/web", "s/nginx:1.25/nginx:1.26/") }
	// Each row is a HelmRelease whose spec is driftDetection: {mode: MODE}
	// (or the row's full driftDetection), drifted by drift.
	const ignoreReplicasFor = "driftDetection:\n  mode: enabled\n  ignore:\n  - paths: [/spec/replicas]\n    target: {kind: %s}\n"
	for _, h := range []struct {
		name, mode, hrSpec string
		objects            []fxObj
		drift              func(c *fxCtx)
	}{
		{name: "helm-enabled-edit-image", mode: "enabled", drift: hEdit},
		{name: "helm-warn-edit-image", mode: "warn", drift: hEdit},
		{name: "helm-disabled-edit-image", mode: "disabled", drift: hEdit},
		{name: "helm-enabled-scale", mode: "enabled", drift: scale},
		{name: "helm-enabled-ignore-replicas", hrSpec: fmt.Sprintf(ignoreReplicasFor, "Deployment"), drift: scale},
		{name: "helm-enabled-ignore-kind-miss", hrSpec: fmt.Sprintf(ignoreReplicasFor, "StatefulSet"), drift: scale},
		{name: "helm-enabled-label-added", mode: "enabled",
			drift: func(c *fxCtx) { c.k("label", "deployment/web", "team=payments") }},
		{name: "helm-enabled-configmap-edit", mode: "enabled", objects: []fxObj{objCM},
			drift: func(c *fxCtx) { c.edit("configmap/cfg", "s/blue/red/") }},
		{name: "helm-enabled-object-annotation-disabled", mode: "enabled",
			drift: func(c *fxCtx) {
				c.k("annotate", "deployment/web", "helm.toolkit.fluxcd.io/driftDetection=disabled")
				hEdit(c)
			}},
	} {
		sc := fxScenario{name: h.name, helm: true, objects: h.objects, drift: h.drift, hrSpec: h.hrSpec}
		if sc.objects == nil {
			sc.objects = hdep
		}
		if h.mode != "" {
			sc.hrSpec = "driftDetection: {mode: " + h.mode + "}\n"
		}
		add(sc)
	}
	return s
}

// --- comparison -------------------------------------------------------------

// fxTally counts agreement for one mode.
type fxTally struct {
	compared, agreed, falseReverted, falseKept, missed int
	// unknown counts fields the tool said it cannot judge in this mode
	// (verdict unknown, naming the flag that tells): not compared.
	unknown int
	// unknownChanged counts, in inferred mode, unknown verdicts on fields
	// the controller changed.
	unknownChanged int
}

// fxDisagreement is one field where the tool and the controller differ.
type fxDisagreement struct {
	scenario, mode, field, class, detail string
}

func (d fxDisagreement) key() string {
	return d.scenario + " " + d.mode + " " + d.field + " " + d.class
}

// changedLeaves lists the JSON pointers of the leaves that differ between
// before and after (diffPaths), skipping what the API server itself bumps.
func changedLeaves(before, after map[string]any) []string {
	var out []string
	for _, p := range diffPaths(before, after, "") {
		if !bumpedByAPIServer(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// newlyOwned lists the fields of after that a manager entry owns which did
// not own them in before: a writer that sent a field took it over even
// where the value it sent is stored as it was (make differential seed
// 50296: a client-side apply of `rules: []` over an aggregated
// ClusterRole's null rules; the server stores null again, and
// kubectl-client-side-apply owns .rules).
func newlyOwned(before, after map[string]any) []string {
	b, a := &unstructured.Unstructured{Object: before}, &unstructured.Unstructured{Object: after}
	bix, err := managedfields.Parse(b)
	if err != nil {
		return nil
	}
	aix, err := managedfields.Parse(a)
	if err != nil {
		return nil
	}
	entry := func(o model.ManagerRef) string { return o.Manager + "\x00" + o.Operation + "\x00" + o.Subresource }
	had := map[string]map[string]bool{}
	for _, f := range bix.Leaves(b) {
		m := map[string]bool{}
		for _, o := range f.Owners {
			m[entry(o)] = true
		}
		had[f.Pointer] = m
	}
	var out []string
	for _, f := range aix.Leaves(a) {
		for _, o := range f.Owners {
			if !had[f.Pointer][entry(o)] {
				out = append(out, f.Pointer)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// bumpedByAPIServer says whether p is, or is inside, a field the API server
// changes on every write.
func bumpedByAPIServer(p string) bool {
	for _, f := range []string{"/metadata/resourceVersion", "/metadata/managedFields", "/metadata/generation", "/status"} {
		if p == f || strings.HasPrefix(p, f+"/") {
			return true
		}
	}
	return false
}

// related says whether two pointers name the same field or one is inside
// the other.
func related(a, b string) bool {
	return a == b || strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}

// loadKnownDivergences reads testdata/flux-known-divergences: a false
// `reverted` may be excused only in inferred mode, where no Git is read.
func loadKnownDivergences(t *testing.T) map[string]string {
	t.Helper()
	return readKnownDivergences(t, filepath.Join("testdata", "flux-known-divergences"), 4,
		"scenario mode object:path class reason...", func(n int, fs []string) {
			if fs[3] == "false-reverted" && fs[1] != modeInferred {
				t.Errorf("testdata/flux-known-divergences:%d: a false `reverted` in %s mode may not be excused", n, fs[1])
			}
		})
}

func TestFluxConformance(t *testing.T) {
	l := lab(t)
	known := loadKnownDivergences(t)
	scenarios := fxScenarios()
	if len(scenarios) < 40 {
		t.Fatalf("only %d scenarios", len(scenarios))
	}
	var (
		mu       sync.Mutex
		tallies  = map[string]*fxTally{}
		disagree []fxDisagreement
		seen     = map[string]bool{}
		// ran holds the scenarios that ran (-run may narrow the suite).
		ran = map[string]bool{}
	)
	for _, m := range fxModes {
		tallies[m] = &fxTally{}
	}
	start := time.Now()
	t.Run("scenarios", func(t *testing.T) {
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				tl, ds := runFxScenario(t, l, sc)
				mu.Lock()
				defer mu.Unlock()
				ran[sc.name] = true
				for m, x := range tl {
					a := tallies[m]
					a.compared += x.compared
					a.agreed += x.agreed
					a.falseReverted += x.falseReverted
					a.falseKept += x.falseKept
					a.missed += x.missed
					a.unknown += x.unknown
					a.unknownChanged += x.unknownChanged
				}
				for _, d := range ds {
					seen[d.key()] = true
					if reason, ok := known[d.key()]; ok {
						t.Logf("known divergence %s (%s): %s", d.key(), reason, d.detail)
						continue
					}
					disagree = append(disagree, d)
					t.Errorf("DISAGREE %s: %s", d.key(), d.detail)
				}
			})
		}
	})
	t.Logf("Flux conformance: %d scenarios in %s", len(scenarios), time.Since(start).Round(time.Second))
	for _, m := range fxModes {
		x := tallies[m]
		t.Logf("  mode %-15s fields agreed %d/%d; false reverted %d; false ignored/left-alone/not-applied/apply-fails %d; changed by the controller but not named %d; said unknown %d (of which the controller changed %d)",
			m, x.agreed, x.compared, x.falseReverted, x.falseKept, x.missed, x.unknown, x.unknownChanged)
	}
	if got := tallies[modeInferred].unknownChanged; got > fxInferredBlindCap && wholeSuiteRan() {
		t.Errorf("mode inferred: %d unknown verdicts on fields the controller changed, above the cap of %d (fxInferredBlindCap)", got, fxInferredBlindCap)
	}
	for m, limit := range fxUnknownCap {
		// unknown is not compared field by field: a change that made every
		// verdict unknown would otherwise pass. The caps are today's counts.
		if got := tallies[m].unknown; got > limit && wholeSuiteRan() {
			t.Errorf("mode %s: %d verdicts said unknown, above the cap of %d (fxUnknownCap)", m, got, limit)
		}
	}
	for k := range known {
		if seen[k] {
			continue
		}
		sc, _, _ := strings.Cut(k, " ")
		if ran[sc] {
			// A stale entry would excuse a regression later: it fails.
			t.Errorf("known divergence no longer seen (fixed? remove it from testdata/flux-known-divergences): %s", k)
		}
	}
}

// fxUnknownCap is the most `unknown` verdicts each mode may give over the
// whole suite (fields the tool says it cannot judge, naming why). Measured
// on the 61 scenarios; lower it when a verdict becomes certain, never
// raise it to let a change pass. Raised once, 17 -> 18 (2026-12-05, issue
// 30's R1): a kubectl write under a `.spec.ignore` path is `unknown` in
// inferred mode, because whether the next apply removes it depends on
// whether Git sets the field, which inferred mode cannot see; the
// differential generator found it confidently wrong when Git does not set
// it (seeds 4073, 4078, 4154, 4276, 6077), and ignore-image-path here is
// the case where Git does. An honest "cannot tell", not a regression.
var fxUnknownCap = map[string]int{modeInferred: 18, modeFile: 1, modeDryRun: 0}

// fxInferredBlindCap caps inferred-mode unknown verdicts on fields the
// controller then changed (in -f and --server-dry-run such a verdict is a
// disagreement). Measured 2026-12-05: 10, all a field owned by another
// manager (kubectl /scale, kube-controller-manager /scale, an operator's
// Update, ops-team's Apply, kubectl-edit under ssa: Merge) that Git also
// sets, which only the manifest can tell: scenarios ssa-merge-in-git,
// ssa-merge-at-runtime, ignore-kind-miss, ignore-annotation-selector-runtime,
// ignore-name-regex-miss, operator-git-field, ssa-other-manager-git-field,
// scale-subresource-kcm-replicas-in-git, scale-replicas-in-git,
// statefulset-scale. Lower it as inferred mode learns; never raise it.
const fxInferredBlindCap = 10

// runFxScenario runs one scenario and returns its per-mode tallies and
// disagreements.
func runFxScenario(t *testing.T, l *fluxLab, sc fxScenario) (map[string]*fxTally, []fxDisagreement) {
	ns := l.namespace(t, sc.name)
	c := &fxCtx{t: t, l: l, ns: ns}
	gitDir := t.TempDir()
	var gitFile string
	ownerGVR, ownerName := gvrKS, "apps"
	if sc.webhook != "" {
		l.webhook(t).register(t, l, ns, sc.webhook)
	}
	if sc.helm {
		l.helm(t)
		gitFile = fluxWrite(t, gitDir, "chart.yaml", fxChart)
		l.helmChart(t, ns, "app", map[string]string{"all.yaml": fxChart})
		l.helmRelease(t, ns, "app", sc.hrSpec)
		ownerGVR, ownerName = gvrHR, "app"
	} else {
		manifests := strings.ReplaceAll(sc.git, "NS", ns)
		gitFile = fluxWrite(t, gitDir, "app.yaml", manifests)
		rev := l.gitRepo(t, ns, map[string]string{"app.yaml": manifests})
		l.kustomization(t, ns, rev, sc.ksSpec)
		if sc.gitNext != "" {
			next := strings.ReplaceAll(sc.gitNext, "NS", ns)
			gitFile = fluxWrite(t, gitDir, "app.yaml", next)
			repo := l.getJSON(t, gvrGitRepo, ns, "repo")
			gen, _, _ := unstructured.NestedInt64(repo, "metadata", "generation")
			l.waitApplied(t, ns, l.publish(t, ns, gen, map[string]string{"app.yaml": next}))
		}
	}
	if sc.suspendBefore {
		c.l.kubectl(t, RunOpts{}, "patch", "kustomization/apps", "-n", ns, "--type=merge", "-p", `{"spec":{"suspend":true}}`)
	}
	sc.drift(c)

	before := map[string]map[string]any{}
	for _, o := range sc.objects {
		before[o.ref] = l.getJSON(t, o.gvr, ns, o.name())
	}
	reports := map[string]map[string]model.Report{}
	codes := map[string]map[string]int{}
	for _, m := range fxModes {
		reports[m] = map[string]model.Report{}
		codes[m] = map[string]int{}
		for _, o := range sc.objects {
			res := l.drift(t, fxExplainArgs(o.ref, ns, m, gitFile)...)
			if res.Code > 1 {
				t.Errorf("explain %s (%s): exit %d\n%s", o.ref, m, res.Code, res.Stderr)
				continue
			}
			var r model.Report
			DecodeJSON(t, res.Stdout, &r)
			if m == modeInferred && !sc.helm && !sc.suspendBefore && noteWith(r, "git-fields-unknown") == nil {
				t.Errorf("explain %s (inferred): no note says that fields deleted live or removed from Git cannot be seen", o.ref)
			}
			reports[m][o.ref] = r
			codes[m][o.ref] = res.Code
		}
	}

	if sc.suspendBefore {
		// A suspended Kustomization ignores reconcile requests: give the
		// controller the time two reconciles take and check nothing moved.
		time.Sleep(3 * time.Second)
	} else {
		l.reconcile(t, ownerGVR, ns, ownerName)
		l.reconcile(t, ownerGVR, ns, ownerName)
	}

	applyFailed := false
	if !sc.helm {
		// An apply that fails leaves the objects as they are and says why
		// in the Kustomization's Ready condition: record it.
		ks := &unstructured.Unstructured{Object: l.getJSON(t, gvrKS, ns, "apps")}
		if st, reason, msg := condition(ks, "Ready"); st != "True" {
			t.Logf("Kustomization %s/apps Ready=%s %s: %s", ns, st, reason, msg)
			applyFailed = st == "False" && !sc.suspendBefore
		}
	}
	if os.Getenv("DRIFT_E2E_DUMP") != "" {
		for _, o := range sc.objects {
			b, _ := json.MarshalIndent(l.getJSON(t, o.gvr, ns, o.name()), "", "  ")
			t.Logf("%s after:\n%s", o.ref, b)
		}
	}
	tallies := map[string]*fxTally{}
	var ds []fxDisagreement
	for _, o := range sc.objects {
		after := l.getJSON(t, o.gvr, ns, o.name())
		changed := changedLeaves(before[o.ref], after)
		if len(changed) > 0 {
			t.Logf("%s: the controller changed %s", o.ref, strings.Join(changed, " "))
		}
		for _, m := range fxModes {
			tl := tallies[m]
			if tl == nil {
				tl = &fxTally{}
				tallies[m] = tl
			}
			r, ok := reports[m][o.ref]
			if !ok {
				continue
			}
			// The exit code is the engine's own verdict: 1 exactly when the
			// controller changes the object, or reports (helm warn), or
			// fails to apply it (apply-fails), or the tool cannot tell
			// (unknown).
			acts := false
			for _, d := range r.Drifts {
				if v := fluxVerdict(d); v != nil && (v.Kind == model.Reported || v.Kind == model.Unknown || v.Kind == model.ApplyFails) {
					acts = true
				}
			}
			if code := codes[m][o.ref]; (code == 1) != (len(changed) > 0 || acts) {
				ds = append(ds, fxDisagreement{sc.name, m, o.ref + ":", "exit-" + fmt.Sprint(code),
					fmt.Sprintf("explain exited %d; the controller changed %d fields", code, len(changed))})
			}
			var named []string
			for _, d := range r.Drifts {
				v := fluxVerdict(d)
				kind := model.VerdictKind("none")
				reason := ""
				if v != nil {
					kind, reason = v.Kind, v.Reason
				}
				named = append(named, d.Path)
				var moved []string
				for _, p := range changed {
					if related(d.Path, p) {
						moved = append(moved, p)
					}
				}
				if kind == model.Unknown {
					tl.unknown++
					if len(moved) > 0 && m == modeInferred {
						// Inferred mode may say it cannot tell (it names
						// -f): counted, capped by fxInferredBlindCap.
						tl.unknownChanged++
					} else if len(moved) > 0 {
						// The controller's behaviour was observed: it
						// changed the field. With Git given, unknown there
						// is a blind spot, never an agreement (issue 30).
						tl.compared++
						tl.falseKept++
						ds = append(ds, fxDisagreement{sc.name, m, o.ref + ":" + d.Path, "unknown-but-changed",
							fmt.Sprintf("tool: unknown (%s); the controller changed %s", reason, strings.Join(moved, " "))})
					}
					continue
				}
				tl.compared++
				field := o.ref + ":" + d.Path
				switch {
				case kind == model.ApplyFails && !applyFailed:
					// apply-fails claims the Kustomization turns Ready=False.
					tl.falseKept++
					ds = append(ds, fxDisagreement{sc.name, m, field, "false-apply-fails",
						fmt.Sprintf("tool: apply-fails (%s); the Kustomization stayed Ready", reason)})
				case kind == model.Reverted && len(moved) > 0, kind != model.Reverted && len(moved) == 0:
					tl.agreed++
				case kind == model.Reverted:
					tl.falseReverted++
					ds = append(ds, fxDisagreement{sc.name, m, field, "false-reverted",
						fmt.Sprintf("tool: reverted (%s); the controller left it (live %v)", reason, jsonish(d.Live))})
				default:
					tl.falseKept++
					ds = append(ds, fxDisagreement{sc.name, m, field, "false-" + string(kind),
						fmt.Sprintf("tool: %s (%s); the controller changed %s", kind, reason, strings.Join(moved, " "))})
				}
			}
			for _, p := range changed {
				if !slices.ContainsFunc(named, func(n string) bool { return related(n, p) }) {
					tl.compared++
					tl.missed++
					ds = append(ds, fxDisagreement{sc.name, m, o.ref + ":" + p, "missed",
						"the controller changed it; the tool named nothing there"})
				}
			}
		}
	}
	return tallies, ds
}

// fxExplainArgs is `explain` of ref in ns, JSON, in mode m (gitFile is
// the Git manifest for -f and --server-dry-run).
func fxExplainArgs(ref, ns, m, gitFile string) []string {
	args := []string{"explain", ref, "-n", ns, "--engine", "flux", "-o", "json"}
	switch m {
	case modeFile:
		args = append(args, "-f", gitFile)
	case modeDryRun:
		args = append(args, "-f", gitFile, "--server-dry-run")
	}
	return args
}

func jsonish(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}
