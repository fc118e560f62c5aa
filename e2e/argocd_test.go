//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Argo CD end to end: the real Application CRD (from the argo-cd v3.2.12
// module zip), an Application and argocd-cm applied as objects, a Deployment
// applied the way Argo CD's controller applies it (client-side apply with
// field manager argocd-controller and the tracking annotation), then drifted
// by real kubectl commands. explain -o json must give Argo's verdict and the
// rule's origin per field, and say why a deliberately wrong rule (group
// `app` for `apps`) matches nothing.

var argoCRD setupOnce

// installApplicationCRD applies manifests/crds/application-crd.yaml from the
// argo-cd module zip (Go module proxy; no other network).
func installApplicationCRD(t *testing.T) {
	t.Helper()
	argoCRD.do(t, func() error {
		dir, err := moduleDir("github.com/argoproj/argo-cd/v3@v3.2.12")
		if err != nil {
			return err
		}
		crd := filepath.Join(dir, "manifests", "crds", "application-crd.yaml")
		// Server-side: the CRD is too large for the last-applied annotation.
		E.Kubectl(t, "apply", "--server-side", "--force-conflicts", "--field-manager=argo-e2e", "-f", crd)
		return E.WaitEstablished(t, "crd/applications.argoproj.io")
	})
}

// argocdCM is Argo CD's settings ConfigMap argocd-cm in ns (labelled as
// Argo CD's own) with data (YAML at data's keys' indentation).
func argocdCM(ns, data string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: " + ns +
		"\n  labels: {app.kubernetes.io/part-of: argocd}\ndata:\n" + data
}

// shopApp is Application appNS/shop, which deploys deploy/ of
// example.com/shop.git to namespace ns, with annotations (the body of a
// flow map, "" for none) and more of its spec (YAML at spec's indentation).
func shopApp(appNS, annotations, ns, spec string) string {
	meta := "{name: shop, namespace: " + appNS + "}"
	if annotations != "" {
		meta = "{name: shop, namespace: " + appNS + ", annotations: {" + annotations + "}}"
	}
	return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: ` + meta + `
spec:
  project: default
  source: {repoURL: https://example.com/shop.git, path: deploy}
  destination: {server: https://kubernetes.default.svc, namespace: ` + ns + `}
` + indent(spec, "  ")
}

// argoWeb is the Deployment an Application tracks (tracking is the
// argocd.argoproj.io/tracking-id annotation Argo CD writes).
func argoWeb(ns, tracking string) string {
	return deployWeb{Namespace: ns, Labels: "app: web", Annotations: "argocd.argoproj.io/tracking-id: " + strconv.Quote(tracking),
		Replicas: 2, Image: "nginx:1.27", Sidecar: true}.YAML()
}

func argoVerdictOf(d model.FieldDrift) *model.Verdict {
	for i := range d.Verdicts {
		if d.Verdicts[i].Engine == model.Engine("argocd") {
			return &d.Verdicts[i]
		}
	}
	return nil
}

// TestArgoCDVerdictsAndWhyNot covers an Application outside the control-plane
// namespace (tracking id "<ns>_<name>"), an Application pointer rule, an
// argocd-cm managedFieldsManagers rule (evaluated with the cluster's OpenAPI
// schema), self-heal, an extraneous label and the why-not note.
func TestArgoCDVerdictsAndWhyNot(t *testing.T) {
	installApplicationCRD(t)
	ctrl := E.Namespace(t, "argo")  // Argo CD's control plane: argocd-cm
	appNS := E.Namespace(t, "argo") // apps in any namespace: the Application
	ns := E.Namespace(t, "argo")    // the workload

	E.Apply(t, argocdCM(ctrl, `  resource.customizations.ignoreDifferences.apps_Deployment: |
    managedFieldsManagers:
    - kubectl-set
`))
	E.Apply(t, shopApp(appNS, "", ns, `syncPolicy:
  automated:
    selfHeal: true
ignoreDifferences:
- group: apps
  kind: Deployment
  jsonPointers:
  - /spec/replicas
- group: app
  kind: Deployment
  jsonPointers:
  - /spec/template/spec/containers/1/image
`))

	tracking := fmt.Sprintf("%s_shop:apps/Deployment:%s/web", appNS, ns)
	manifest := argoWeb(ns, tracking)
	E.Apply(t, manifest, "--field-manager=argocd-controller")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=5")
	E.Kubectl(t, "-n", ns, "set", "image", "deployment/web", "app=nginx:1.29")
	E.KubectlWith(t, RunOpts{Env: []string{"KUBE_EDITOR=sed -i s/busybox:1.36/busybox:1.37/"}}, "-n", ns, "edit", "deployment/web")
	E.Kubectl(t, "-n", ns, "label", "deployment/web", "hotfix=true")

	desired := writeFile(t, "web.yaml", manifest)
	r := explainJSON(t, 1, "deploy/web", "-n", ns, "-f", desired, "--engine", "argocd", "--argocd-namespace", ctrl)

	var owner *model.Owner
	for i := range r.Owners {
		if r.Owners[i].Engine == model.Engine("argocd") {
			owner = &r.Owners[i]
		}
	}
	if owner == nil || owner.Namespace != appNS || owner.Name != "shop" || !owner.Found || !owner.SelfHeal {
		t.Fatalf("Argo CD owner = %+v, want Application %s/shop found with self-heal", owner, appNS)
	}

	got := byFieldPath(r)
	type want struct {
		kind        model.VerdictKind
		ruleObject  string
		ruleField   string
		reasonMatch string
	}
	wants := map[string]want{
		".spec.replicas": {model.Ignored, "Application " + appNS + "/shop", ".spec.ignoreDifferences[0]", "jsonPointer /spec/replicas"},
		".spec.template.spec.containers[name=app].image": {model.Ignored, "ConfigMap " + ctrl + "/argocd-cm",
			"data[resource.customizations.ignoreDifferences.apps_Deployment]", "manager kubectl-set"},
		".spec.template.spec.containers[name=sidecar].image": {model.Reverted, "", "", "selfHeal"},
		".metadata.labels.hotfix":                            {model.LeftAlone, "", "", "last-applied"},
	}
	for fp, w := range wants {
		d, ok := got[fp]
		if !ok {
			t.Errorf("no drift %s in %q", fp, fieldPaths(r))
			continue
		}
		v := argoVerdictOf(d)
		if v == nil {
			t.Errorf("%s: no Argo CD verdict", fp)
			continue
		}
		if v.Kind != w.kind || !strings.Contains(v.Reason, w.reasonMatch) {
			t.Errorf("%s: verdict %s (%s), want %s containing %q", fp, v.Kind, v.Reason, w.kind, w.reasonMatch)
		}
		if w.ruleField != "" && (v.Rule == nil || v.Rule.Object != w.ruleObject || v.Rule.Field != w.ruleField) {
			t.Errorf("%s: rule origin %+v, want %s %s", fp, v.Rule, w.ruleObject, w.ruleField)
		}
	}

	var why *model.Note
	for i := range r.Notes {
		n := &r.Notes[i]
		if n.Engine == model.Engine("argocd") && n.Reason == "group-mismatch" {
			why = n
		}
	}
	if why == nil || !strings.Contains(why.Message, `"app"`) || !strings.Contains(why.Message, `did you mean "apps"`) ||
		why.Rule == nil || why.Rule.Field != ".spec.ignoreDifferences[1]" {
		t.Fatalf("why-not note for the `app` rule = %+v; notes: %+v", why, r.Notes)
	}

	// Argo CD's own diff, as a saved managed-resources response, shown
	// beside our verdicts.
	liveJSON := E.Kubectl(t, "-n", ns, "get", "deployment", "web", "-o", "json")
	predicted := strings.ReplaceAll(liveJSON, "busybox:1.37", "busybox:1.36")
	item, _ := json.Marshal(map[string]any{"items": []map[string]any{{
		"group": "apps", "kind": "Deployment", "namespace": ns, "name": "web", "modified": true,
		"normalizedLiveState": liveJSON, "predictedLiveState": predicted, "targetState": predicted,
	}}})
	saved := writeFile(t, "managed-resources.json", string(item))
	r = explainJSON(t, 1, "deploy/web", "-n", ns, "-f", desired, "--engine", "argocd", "--argocd-namespace", ctrl, "--argocd-diff", saved)
	var api *model.Note
	for i := range r.Notes {
		if r.Notes[i].Reason == "argocd-api" {
			api = &r.Notes[i]
		}
	}
	if api == nil || !strings.Contains(api.Message, "OutOfSync") || !strings.Contains(api.Message, "/spec/template/spec/containers/1/image") {
		t.Fatalf("Argo CD API note = %+v", api)
	}
}

// TestArgoCDBadRulesAreNotes: an invalid jq expression in argocd-cm makes
// Argo CD's own comparison fail; explain reports it as a per-rule error and
// still evaluates the other rules (exit 1 for drift, not 2).
func TestArgoCDBadRulesAreNotes(t *testing.T) {
	installApplicationCRD(t)
	ctrl := E.Namespace(t, "argo")
	ns := E.Namespace(t, "argo")
	E.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: %s
data:
  resource.customizations.ignoreDifferences.all: |
    jqPathExpressions:
    - .metadata.labels[
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jqPathExpressions:
    - until(false; .)
`, ctrl))
	E.Apply(t, shopApp(ctrl, "", ns, `ignoreDifferences:
- group: apps
  kind: Deployment
  jsonPointers: [/spec/replicas]
`))
	manifest := argoWeb(ns, "shop:apps/Deployment:"+ns+"/web")
	E.Apply(t, manifest, "--field-manager=argocd-controller")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=3")
	E.Kubectl(t, "-n", ns, "set", "image", "deployment/web", "app=nginx:1.29")

	r := explainJSON(t, 1, "deploy/web", "-n", ns, "-f", writeFile(t, "web.yaml", manifest), "--engine", "argocd", "--argocd-namespace", ctrl)
	reasons := map[string]bool{}
	for _, n := range r.Notes {
		if n.Engine == model.Engine("argocd") {
			reasons[n.Reason] = true
		}
	}
	for _, want := range []string{"comparison-error", "invalid-rule", "jq-timeout"} {
		if !reasons[want] {
			t.Errorf("no %s note; notes: %+v", want, r.Notes)
		}
	}
	got := byFieldPath(r)
	if v := argoVerdictOf(got[".spec.replicas"]); v == nil || v.Kind != model.Ignored {
		t.Errorf("replicas verdict %+v, want ignored by the Application rule", v)
	}
	if v := argoVerdictOf(got[".spec.template.spec.containers[name=app].image"]); v == nil || v.Kind != model.Reported {
		t.Errorf("image verdict %+v, want reported (manual sync)", v)
	}
}

// TestArgoCDServerSideDiff: an Application with compare option
// ServerSideDiff=true is judged by a real server-side apply dry-run as
// argocd-controller when --server-dry-run is given, and by the same apply
// computed in memory otherwise (saying so).
func TestArgoCDServerSideDiff(t *testing.T) {
	installApplicationCRD(t)
	ctrl := E.Namespace(t, "argo")
	ns := E.Namespace(t, "argo")
	E.Apply(t, shopApp(ctrl, "argocd.argoproj.io/compare-options: ServerSideDiff=true", ns, `syncPolicy:
  syncOptions: [ServerSideApply=true]
`))
	manifest := argoWeb(ns, "shop:apps/Deployment:"+ns+"/web")
	E.Apply(t, manifest, "--server-side", "--field-manager=argocd-controller")
	E.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=4")
	E.Kubectl(t, "-n", ns, "label", "deployment/web", "hotfix=true")
	desired := writeFile(t, "web.yaml", manifest)

	hasNote := func(r model.Report, reason string) bool {
		for _, n := range r.Notes {
			if n.Engine == model.Engine("argocd") && n.Reason == reason {
				return true
			}
		}
		return false
	}
	r := explainJSON(t, 1, "deploy/web", "-n", ns, "-f", desired, "--engine", "argocd", "--argocd-namespace", ctrl, "--server-dry-run")
	if hasNote(r, "server-side-diff") || hasNote(r, "diff-failed") {
		t.Errorf("server-side diff did not run with --server-dry-run: %+v", r.Notes)
	}
	got := byFieldPath(r)
	if v := argoVerdictOf(got[".spec.replicas"]); v == nil || v.Kind != model.Reported {
		t.Errorf("replicas verdict %+v, want reported", v)
	}
	if v := argoVerdictOf(got[".metadata.labels.hotfix"]); v == nil || v.Kind != model.LeftAlone {
		t.Errorf("hotfix label verdict %+v, want left alone (another manager's field survives the apply)", v)
	}
	// Nothing was persisted by the dry-run.
	if rep := E.Kubectl(t, "-n", ns, "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"); rep != "4" {
		t.Fatalf("replicas now %q: the dry-run persisted", rep)
	}

	// Without --server-dry-run the apply is computed in memory (issue 32,
	// A3): the same verdicts, and a note saying so.
	r = explainJSON(t, 1, "deploy/web", "-n", ns, "-f", desired, "--engine", "argocd", "--argocd-namespace", ctrl)
	if !hasNote(r, "server-side-diff") {
		t.Errorf("no server-side-diff note without --server-dry-run: %+v", r.Notes)
	}
	got = byFieldPath(r)
	if v := argoVerdictOf(got[".spec.replicas"]); v == nil || v.Kind != model.Reported {
		t.Errorf("in memory: replicas verdict %+v, want reported", v)
	}
	if v := argoVerdictOf(got[".metadata.labels.hotfix"]); v == nil || v.Kind != model.LeftAlone {
		t.Errorf("in memory: hotfix label verdict %+v, want left alone", v)
	}
}
