//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// webDeployment is what Git holds: two containers, applied by Flux's
// kustomize-controller with its ownership labels.
func webDeployment(ns string) string { return webInGit(ns).YAML() }

func webInGit(ns string) deployWeb {
	return deployWeb{Namespace: ns,
		Labels:      "app: web, kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system",
		Annotations: "team: shop",
		Replicas:    2, Image: "nginx:1.27", Ports: "{containerPort: 80}", Sidecar: true}
}

// writeFile writes content into the test's temp dir and returns the path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	return testutil.WriteFile(t, t.TempDir(), name, content)
}

// driftedWeb applies webDeployment as kustomize-controller, then drifts it
// with real kubectl operations, each under kubectl's own field manager.
func driftedWeb(t *testing.T, ns string) {
	t.Helper()
	E.Apply(t, webDeployment(ns), "--server-side", "--field-manager=kustomize-controller")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=5")
	E.Kubectl(t, "-n", ns, "set", "image", "deployment/web", "app=nginx:1.28")
	E.Kubectl(t, "-n", ns, "patch", "deployment/web", "--type=merge", "-p", `{"metadata":{"annotations":{"oncall":"paged"}}}`)
	E.Kubectl(t, "-n", ns, "label", "deployment/web", "hotfix=true")
	E.KubectlWith(t, RunOpts{Env: []string{"KUBE_EDITOR=sed -i s/busybox:1.36/busybox:1.37/"}}, "-n", ns, "edit", "deployment/web")
}

// explainJSON runs explain -o json and decodes the report.
func explainJSON(t *testing.T, wantCode int, args ...string) model.Report {
	t.Helper()
	return explainWith(t, E.Drift, wantCode, args...)
}

// explainWith runs explain -o json through drift (a harness's kubeconfig)
// and decodes the report; the test fails unless it exits wantCode and
// prints a DriftReport.
func explainWith(t *testing.T, drift func(t testing.TB, args ...string) Result, wantCode int, args ...string) model.Report {
	t.Helper()
	res := drift(t, append([]string{"explain", "-o", "json"}, args...)...)
	if res.Code != wantCode {
		t.Fatalf("explain %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.Code, wantCode, res.Stdout, res.Stderr)
	}
	var r model.Report
	DecodeJSON(t, res.Stdout, &r)
	if r.APIVersion != model.APIVersion || r.Kind != "DriftReport" {
		t.Fatalf("not a DriftReport: %s %s", r.APIVersion, r.Kind)
	}
	return r
}

func byFieldPath(r model.Report) map[string]model.FieldDrift {
	m := map[string]model.FieldDrift{}
	for _, d := range r.Drifts {
		m[d.FieldPath] = d
	}
	return m
}

func fieldPaths(r model.Report) []string {
	var out []string
	for _, d := range r.Drifts {
		out = append(out, d.FieldPath)
	}
	sort.Strings(out)
	return out
}

// wantDrift is one expected field of the acceptance scenario.
type wantDrift struct {
	fieldPath   string
	path        string
	manager     string
	subresource string
	cause       model.CauseClass
	desired     any // nil: not checked
	live        any
}

// The drifts the real API server records for driftedWeb. kubectl scale
// writes through the scale subresource as manager "kubectl"; the others
// use kubectl's per-verb managers.
func acceptanceDrifts() []wantDrift {
	return []wantDrift{
		{fieldPath: ".metadata.annotations.oncall", path: "/metadata/annotations/oncall", manager: "kubectl-patch", cause: model.CauseManual, live: "paged"},
		{fieldPath: ".metadata.labels.hotfix", path: "/metadata/labels/hotfix", manager: "kubectl-label", cause: model.CauseManual, live: "true"},
		{fieldPath: ".spec.replicas", path: "/spec/replicas", manager: "kubectl", subresource: "scale", cause: model.CauseManual, desired: float64(2), live: float64(5)},
		{fieldPath: ".spec.template.spec.containers[name=app].image", path: "/spec/template/spec/containers/0/image", manager: "kubectl-set", cause: model.CauseManual, desired: "nginx:1.27", live: "nginx:1.28"},
		{fieldPath: ".spec.template.spec.containers[name=sidecar].image", path: "/spec/template/spec/containers/1/image", manager: "kubectl-edit", cause: model.CauseManual, desired: "busybox:1.36", live: "busybox:1.37"},
	}
}

func checkAcceptance(t *testing.T, r model.Report, checkDesired bool) {
	t.Helper()
	want := acceptanceDrifts()
	var wantPaths []string
	for _, w := range want {
		wantPaths = append(wantPaths, w.fieldPath)
	}
	sort.Strings(wantPaths)
	if got := fieldPaths(r); strings.Join(got, "\n") != strings.Join(wantPaths, "\n") {
		t.Errorf("drifted fields:\n  got  %q\n  want %q", got, wantPaths)
	}
	got := byFieldPath(r)
	for _, w := range want {
		d, ok := got[w.fieldPath]
		if !ok {
			continue
		}
		if d.Path != w.path {
			t.Errorf("%s: path %q, want %q", w.fieldPath, d.Path, w.path)
		}
		if d.Cause != w.cause {
			t.Errorf("%s: cause %q, want %q", w.fieldPath, d.Cause, w.cause)
		}
		if len(d.Managers) == 0 || d.Managers[0].Manager != w.manager || d.Managers[0].Subresource != w.subresource {
			t.Errorf("%s: managers %+v, want first %s (subresource %q)", w.fieldPath, d.Managers, w.manager, w.subresource)
		} else if d.Managers[0].Class != w.cause {
			t.Errorf("%s: manager class %q, want %q", w.fieldPath, d.Managers[0].Class, w.cause)
		}
		if fmt.Sprint(d.Live) != fmt.Sprint(w.live) {
			t.Errorf("%s: live %v, want %v", w.fieldPath, d.Live, w.live)
		}
		if checkDesired && w.desired != nil && fmt.Sprint(d.Desired) != fmt.Sprint(w.desired) {
			t.Errorf("%s: desired %v, want %v", w.fieldPath, d.Desired, w.desired)
		}
		if w.manager != "kubectl" { // the API server records no time for scale updates
			if d.Managers[0].Time == nil || time.Since(*d.Managers[0].Time) > time.Hour {
				t.Errorf("%s: manager time %v, want a recent time", w.fieldPath, d.Managers[0].Time)
			}
		}
	}
}

// TestExplainInferredAcceptance is issue 2's acceptance: a Deployment
// applied by kustomize-controller, then scaled, image-set, patched,
// labelled and edited by hand; explain infers the drift from managedFields
// alone. The exit code is the engine's own verdict (issue 20): the
// Kustomization flux-system/apps named by the labels does not exist on the
// test cluster, so nothing reconciles the object: exit 0, drift shown.
func TestExplainInferredAcceptance(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	driftedWeb(t, ns)

	r := explainJSON(t, 0, "deploy/web", "-n", ns)
	assertOwnerNotFound(t, r)
	if r.DesiredSource != model.SourceManagedFields {
		t.Errorf("desiredSource %q, want %q", r.DesiredSource, model.SourceManagedFields)
	}
	if r.Resource != (model.ResourceID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ns, Name: "web"}) {
		t.Errorf("resource %+v", r.Resource)
	}
	checkAcceptance(t, r, false)
	for _, d := range r.Drifts {
		if d.Desired != nil {
			t.Errorf("%s: inferred drift claims a desired value %v without a last-applied configuration", d.FieldPath, d.Desired)
		}
	}

	// "TYPE NAME" spelling, text output: a person sees the source and the
	// managers.
	res := E.Drift(t, "explain", "deployment", "web", "-n", ns)
	if res.Code != 0 {
		t.Fatalf("text explain: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	// The default view leaves out the Update operation (every kubectl
	// write is one) and keeps the subresource; -o wide has both.
	for _, s := range []string{"inferred from field ownership", "kubectl-set", "kubectl (scale)", ".spec.template.spec.containers[name=app].image", "nginx:1.28", "manual"} {
		if !strings.Contains(res.Stdout, s) {
			t.Errorf("text output lacks %q:\n%s", s, res.Stdout)
		}
	}
	wide := E.Drift(t, "explain", "deployment", "web", "-n", ns, "-o", "wide")
	for _, s := range []string{"kubectl-set (Update)", "kubectl (Update, scale)"} {
		if !strings.Contains(wide.Stdout, s) {
			t.Errorf("-o wide lacks %q:\n%s", s, wide.Stdout)
		}
	}
	if strings.Contains(res.Stdout, "\x1b[") {
		t.Errorf("colour escape codes in non-TTY output:\n%s", res.Stdout)
	}
}

// TestExplainWithFileAcceptance compares with the original manifest from
// Git (-f): same fields, now with desired values.
func TestExplainWithFileAcceptance(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	driftedWeb(t, ns)
	manifest := writeFile(t, "web.yaml", webDeployment(ns))

	// Exit 0: the owner does not exist (see TestExplainInferredAcceptance).
	r := explainJSON(t, 0, "deploy/web", "-n", ns, "-f", manifest)
	assertOwnerNotFound(t, r)
	if r.DesiredSource != model.SourceFile {
		t.Errorf("desiredSource %q, want file", r.DesiredSource)
	}
	checkAcceptance(t, r, true)

	// The manifest among others in a multi-document file, read from stdin.
	multi := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: " + ns + "}\ndata: {a: b}\n---\n" + webDeployment(ns)
	res := E.Run(t, RunOpts{Stdin: []byte(multi)}, KubectlDrift, "explain", "deploy/web", "-n", ns, "-f", "-", "-o", "json")
	if res.Code != 0 {
		t.Fatalf("explain -f -: exit %d\n%s", res.Code, res.Stderr)
	}
	var r2 model.Report
	DecodeJSON(t, res.Stdout, &r2)
	checkAcceptance(t, r2, true)
}

// TestExplainUntouched: an object nobody changed has no drift, exit 0,
// inferred or against its manifest.
func TestExplainUntouched(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	E.Apply(t, webDeployment(ns), "--server-side", "--field-manager=kustomize-controller")
	manifest := writeFile(t, "web.yaml", webDeployment(ns))

	for _, args := range [][]string{
		{"deploy/web", "-n", ns},
		{"deploy/web", "-n", ns, "-f", manifest},
	} {
		r := explainJSON(t, 0, args...)
		if len(r.Drifts) != 0 {
			t.Errorf("explain %v: drifts on an untouched object: %+v", args, r.Drifts)
		}
	}
	res := E.Drift(t, "explain", "deploy/web", "-n", ns)
	if res.Code != 0 || !strings.Contains(res.Stdout, "No drift.") {
		t.Errorf("text explain of untouched object: exit %d\n%s", res.Code, res.Stdout)
	}
}

// TestExplainArgoClientSideApply: Argo CD's classic sync is a client-side
// apply as argocd-controller, which leaves kubectl's
// last-applied-configuration: inferred drift then knows the desired values.
func TestExplainArgoClientSideApply(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	web := webInGit(ns) // without Flux's labels, with Argo CD's tracking id
	web.Labels = "app: web"
	web.Annotations += ", argocd.argoproj.io/tracking-id: " + strconv.Quote("shop:apps/Deployment:"+ns+"/web")
	manifest := web.YAML()
	E.Apply(t, manifest, "--field-manager=argocd-controller")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=4")
	E.Kubectl(t, "-n", ns, "set", "image", "deployment/web", "app=nginx:1.29")

	// Application shop does not exist on this cluster: the drift is shown
	// (with desired values from last-applied) but nothing reconciles the
	// object, so the exit code, the engines' verdict, is 0.
	r := explainJSON(t, 0, "deploy/web", "-n", ns)
	got := byFieldPath(r)
	if len(r.Drifts) != 2 {
		t.Errorf("drifted fields %q, want replicas and the app image", fieldPaths(r))
	}
	if len(r.Owners) == 0 || !r.Owners[0].Missing {
		t.Errorf("owners %+v: want the missing Application argocd/shop", r.Owners)
	}
	rep, img := got[".spec.replicas"], got[".spec.template.spec.containers[name=app].image"]
	if fmt.Sprint(rep.Desired) != "2" || fmt.Sprint(rep.Live) != "4" || rep.Change != model.Changed || rep.Cause != model.CauseManual {
		t.Errorf("replicas drift %+v, want 2 -> 4, changed, manual", rep)
	}
	if img.Desired != "nginx:1.27" || img.Live != "nginx:1.29" || img.Cause != model.CauseManual ||
		len(img.Managers) == 0 || img.Managers[0].Manager != "kubectl-set" {
		t.Errorf("image drift %+v, want nginx:1.27 -> nginx:1.29 by kubectl-set", img)
	}
	// A client-side apply records its manager as an Update, not an Apply.
	res := E.Kubectl(t, "-n", ns, "get", "deploy", "web", "-o", `jsonpath={.metadata.managedFields[?(@.manager=="argocd-controller")].operation}`)
	if res != "Update" {
		t.Fatalf("argocd-controller operation %q, want Update", res)
	}
}

// TestExplainSecretNeverShowsValues: drift in a Secret is reported, but
// neither text nor JSON output carries the values.
func TestExplainSecretNeverShowsValues(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	secret := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: %s
  labels:
    kustomize.toolkit.fluxcd.io/name: apps
    kustomize.toolkit.fluxcd.io/namespace: flux-system
type: Opaque
stringData:
  password: git-password-value
`, ns)
	E.Apply(t, secret, "--server-side", "--field-manager=kustomize-controller")
	E.Kubectl(t, "-n", ns, "patch", "secret", "db", "--type=merge", "-p", `{"stringData":{"password":"hand-typed-password","extra":"another-value"}}`)
	manifest := writeFile(t, "secret.yaml", secret)

	// base64 of the values too: Secrets hold data base64-encoded.
	forbidden := []string{"git-password-value", "hand-typed-password", "another-value",
		"Z2l0LXBhc3N3b3JkLXZhbHVl", "aGFuZC10eXBlZC1wYXNzd29yZA==", "YW5vdGhlci12YWx1ZQ=="}
	for _, args := range [][]string{
		{"explain", "secret/db", "-n", ns},
		{"explain", "secret/db", "-n", ns, "-o", "json"},
		{"explain", "secret/db", "-n", ns, "-o", "yaml"},
		{"explain", "secret/db", "-n", ns, "-f", manifest},
		{"explain", "secret/db", "-n", ns, "-f", manifest, "-o", "json"},
	} {
		res := E.Drift(t, args...)
		// Exit 0: the Secret drifted but its owner Kustomization does not
		// exist, so no engine acts on it (the drift is still printed).
		if res.Code != 0 {
			t.Errorf("%v: exit %d, want 0 (drifted, owner not found)\n%s%s", args, res.Code, res.Stdout, res.Stderr)
		}
		for _, v := range forbidden {
			if strings.Contains(res.Stdout+res.Stderr, v) {
				t.Errorf("%v printed secret value %q:\n%s", args, v, res.Stdout)
			}
		}
		if !strings.Contains(res.Stdout, "***") {
			t.Errorf("%v: no masked value in output:\n%s", args, res.Stdout)
		}
		if !strings.Contains(res.Stdout, "password") {
			t.Errorf("%v: the drifted key is not named:\n%s", args, res.Stdout)
		}
	}
}

// TestExplainLiveFile: offline use. A live object saved with managed
// fields explains without any API server; one saved without them still
// diffs against -f, with a loud warning that ownership is unknown.
func TestExplainLiveFile(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	driftedWeb(t, ns)
	manifest := writeFile(t, "web.yaml", webDeployment(ns))
	withMF := writeFile(t, "live-mf.yaml", E.Kubectl(t, "-n", ns, "get", "deploy", "web", "-o", "yaml", "--show-managed-fields"))
	withoutMF := writeFile(t, "live.yaml", E.Kubectl(t, "-n", ns, "get", "deploy", "web", "-o", "yaml"))
	offline := "--server=https://127.0.0.1:1" // proves no API server is needed

	r := explainJSON(t, 1, "deploy/web", "--live-file", withMF, offline)
	checkAcceptance(t, r, false)
	r = explainJSON(t, 1, "--live-file", withMF, "-f", manifest, offline)
	checkAcceptance(t, r, true)

	res := E.Drift(t, "explain", "deploy/web", "--live-file", withoutMF, "-f", manifest, "-o", "json", offline)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s", res.Code, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "warning:") || !strings.Contains(res.Stderr, "no managedFields") || !strings.Contains(res.Stderr, "--show-managed-fields") {
		t.Errorf("no loud warning about missing managedFields on stderr:\n%s", res.Stderr)
	}
	var noMF model.Report
	DecodeJSON(t, res.Stdout, &noMF)
	if _, ok := byFieldPath(noMF)[".spec.replicas"]; !ok {
		t.Errorf("value drift lost without managedFields: %q", fieldPaths(noMF))
	}
	warned := false
	for _, n := range noMF.Notes {
		if n.Level == model.NoteWarning && strings.Contains(n.Message, "managedFields") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("report carries no warning note: %+v", noMF.Notes)
	}
}

// TestExplainReadOnlyUser: get/list RBAC is enough.
func TestExplainReadOnlyUser(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	driftedWeb(t, ns)
	res := E.Run(t, RunOpts{Kubeconfig: E.ReaderKubeconfig}, KubectlDrift, "explain", "deploy/web", "-n", ns, "-o", "json")
	// Exit 0: owner not found (see TestExplainInferredAcceptance).
	if res.Code != 0 {
		t.Fatalf("reader: exit %d, want 0\n%s", res.Code, res.Stderr)
	}
	var r model.Report
	DecodeJSON(t, res.Stdout, &r)
	checkAcceptance(t, r, false)
}

// aliasBomb is the "billion laughs" of YAML: nine levels of nine aliases.
// It is the object explain looks for, so only a refusal to expand it
// gives an error.
var aliasBomb = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n" + testutil.AliasBomb(9)

// TestExplainBadInput: every bad input is one clear line on stderr and
// exit 2, through the real binary; never a panic or a stack trace.
func TestExplainBadInput(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	E.Apply(t, webDeployment(ns), "--server-side", "--field-manager=kustomize-controller")
	dir := t.TempDir()
	malformed := filepath.Join(dir, "malformed.yaml")
	if err := os.WriteFile(malformed, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web\n  spec: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(dir, "bomb.yaml")
	if err := os.WriteFile(bomb, []byte(strings.Replace(aliasBomb, "{name: web}", "{name: web, namespace: "+ns+"}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	bigFile(t, big, webInGit(ns), 50<<20)
	notK8s := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(notK8s, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unrelated}\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		opts RunOpts
		args []string
		want string
	}{
		{"unknown resource type", RunOpts{}, []string{"explain", "nosuchkinds/x", "-n", ns}, `doesn't have a resource type "nosuchkinds"`},
		{"missing object", RunOpts{}, []string{"explain", "deploy/nope", "-n", ns}, `deployments.apps "nope" not found in namespace "` + ns + `"`},
		{"malformed -f YAML", RunOpts{}, []string{"explain", "deploy/web", "-n", ns, "-f", malformed}, "malformed.yaml"},
		{"alias bomb", RunOpts{Timeout: time.Minute}, []string{"explain", "deploy/web", "-n", ns, "-f", bomb}, "bomb.yaml"},
		{"50 MB file", RunOpts{Timeout: time.Minute}, []string{"explain", "deploy/web", "-n", ns, "-f", big}, "big.yaml"},
		{"no matching document", RunOpts{}, []string{"explain", "deploy/web", "-n", ns, "-f", notK8s}, "no document is Deployment.apps " + ns + "/web"},
		{"unreachable API server", RunOpts{}, []string{"explain", "deploy/web", "-n", ns, "--server", "https://127.0.0.1:1"}, "cannot reach the Kubernetes API server at https://127.0.0.1:1"},
		{"forbidden (impersonated user without rights)", RunOpts{}, []string{"explain", "deploy/web", "-n", ns, "--as", "nobody"}, `forbidden: cannot get deployments.apps "web"`},
		{"bad output format", RunOpts{}, []string{"explain", "deploy/web", "-n", ns, "-o", "xml"}, `unknown output format "xml"`},
		{"-f and -k together", RunOpts{}, []string{"explain", "deploy/web", "-n", ns, "-f", notK8s, "-k", dir}, "mutually exclusive"},
		{"no object named", RunOpts{}, []string{"explain"}, "TYPE/NAME"},
		{"bad engine", RunOpts{}, []string{"explain", "deploy/web", "-n", ns, "--engine", "jenkins"}, `invalid --engine "jenkins"`},
		{"unknown flag", RunOpts{}, []string{"explain", "deploy/web", "--frobnicate"}, "unknown flag: --frobnicate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := E.Run(t, tc.opts, KubectlDrift, tc.args...)
			AssertCleanError(t, res, tc.want)
		})
	}
}

// bigFile writes d with a ~size-byte annotation more: the very
// object explain looks for, so only a size limit gives an error.
func bigFile(t *testing.T, path string, d deployWeb, size int) {
	t.Helper()
	d.Annotations += ", padding: " + strings.Repeat("x", size)
	if err := os.WriteFile(path, []byte(d.YAML()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestExplainCompletion: shell completion offers resource types from
// discovery, then the names of that type in the namespace.
func TestExplainCompletion(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	E.Apply(t, webDeployment(ns), "--server-side", "--field-manager=kustomize-controller")

	types := E.Drift(t, "__complete", "explain", "deploy")
	if types.Code != 0 || !strings.Contains(types.Stdout, "deploy\n") || !strings.Contains(types.Stdout, "deployments.apps\n") {
		t.Errorf("type completion: exit %d\n%s%s", types.Code, types.Stdout, types.Stderr)
	}
	names := E.Drift(t, "__complete", "explain", "-n", ns, "deploy/w")
	if names.Code != 0 || !strings.Contains(names.Stdout, "deploy/web\n") {
		t.Errorf("name completion: exit %d\n%s%s", names.Code, names.Stdout, names.Stderr)
	}
	spaced := E.Drift(t, "__complete", "explain", "-n", ns, "deployment", "")
	if spaced.Code != 0 || !strings.Contains(spaced.Stdout, "web\n") {
		t.Errorf("TYPE NAME completion: exit %d\n%s%s", spaced.Code, spaced.Stdout, spaced.Stderr)
	}
	done := E.Drift(t, "__complete", "explain", "-n", ns, "deploy/web", "")
	if strings.Contains(done.Stdout, "web") {
		t.Errorf("completion after a full TYPE/NAME offers more objects:\n%s", done.Stdout)
	}
}

// assertOwnerNotFound checks that every Flux verdict of r says its owner
// does not exist and none promises a revert (issue 20).
func assertOwnerNotFound(t *testing.T, r model.Report) {
	t.Helper()
	if len(r.Drifts) == 0 {
		t.Fatal("no drifts")
	}
	for _, d := range r.Drifts {
		for _, v := range d.Verdicts {
			if v.Engine == model.Engine("flux") && (v.Kind != model.NotApplied || !strings.Contains(v.Reason, "owner not found")) {
				t.Errorf("%s: %s %q, want not-applied: owner not found", d.Path, v.Kind, v.Reason)
			}
		}
	}
}
