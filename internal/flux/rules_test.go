package flux

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// fixedPos pretends every pointer sits at a line derived from its length,
// so tests can tell that the pointer reached the positioner.
func fixedPos(pointer string) (int, int) { return 10 + len(pointer), 3 }

func TestRulesFromDocs(t *testing.T) {
	ks := obj(t, kustomization)
	hr := obj(t, strings.Replace(helmRelease, "%s", "warn", 1))
	app := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
  labels: {kustomize.toolkit.fluxcd.io/prune: disabled}
  annotations:
    kustomize.toolkit.fluxcd.io/ssa: replace
    kustomize.toolkit.fluxcd.io/reconcile: disabled
    helm.toolkit.fluxcd.io/driftDetection: disabled
`)
	rules, errs := rulesFromDocs([]doc{
		{obj: ks, file: "ks.yaml", pos: fixedPos},
		{obj: hr, file: "hr.yaml", pos: fixedPos},
		{obj: app, file: "app.yaml", pos: fixedPos},
	})
	got := map[string]model.Rule{}
	for _, r := range rules {
		got[r.Origin.Object+" "+r.Origin.Field] = r
	}
	want := map[string]struct {
		typ     model.RuleType
		line    int
		whole   bool
		errPart string
	}{
		"Kustomization flux-system/apps .spec.ignore[0]":                                   {typ: RuleKustomizeIgnore, line: 10 + len("/spec/ignore/0")},
		"Kustomization flux-system/apps .spec.ignore[3]":                                   {typ: RuleKustomizeIgnore, line: 10 + len("/spec/ignore/3")},
		"HelmRelease flux-system/web .spec.driftDetection.ignore[0]":                       {typ: RuleHelmIgnore, line: 10 + len("/spec/driftDetection/ignore/0")},
		"HelmRelease flux-system/web .spec.driftDetection.ignore[1]":                       {typ: RuleHelmIgnore, whole: true, line: 10 + len("/spec/driftDetection/ignore/1")},
		"Deployment prod/web .metadata.annotations[kustomize.toolkit.fluxcd.io/ssa]":       {typ: RuleSSAAnnotation, errPart: "treats it as Override", line: 10 + len("/metadata/annotations/kustomize.toolkit.fluxcd.io~1ssa")},
		"Deployment prod/web .metadata.annotations[kustomize.toolkit.fluxcd.io/reconcile]": {typ: RuleReconcileDisabled, whole: true, line: 10 + len("/metadata/annotations/kustomize.toolkit.fluxcd.io~1reconcile")},
		"Deployment prod/web .metadata.labels[kustomize.toolkit.fluxcd.io/prune]":          {typ: RulePruneDisabled, line: 10 + len("/metadata/labels/kustomize.toolkit.fluxcd.io~1prune")},
		"Deployment prod/web .metadata.annotations[helm.toolkit.fluxcd.io/driftDetection]": {typ: RuleDriftDisabled, whole: true, line: 10 + len("/metadata/annotations/helm.toolkit.fluxcd.io~1driftDetection")},
	}
	for key, w := range want {
		r, ok := got[key]
		if !ok {
			t.Errorf("missing rule %s; have %v", key, keys(got))
			continue
		}
		if r.Type != w.typ || r.WholeResource != w.whole || r.Engine != Engine || r.Origin.File == "" || r.Origin.Line != w.line || r.Origin.Column != 3 {
			t.Errorf("%s: %+v, want type %s whole %v line %d", key, r, w.typ, w.whole, w.line)
		}
		if (w.errPart == "") != (r.Error == "") || !strings.Contains(r.Error, w.errPart) {
			t.Errorf("%s: error %q, want %q", key, r.Error, w.errPart)
		}
	}
	r0 := got["Kustomization flux-system/apps .spec.ignore[0]"]
	if r0.Target.Kind != "Deployment" || r0.Target.Name != "web-.*" || r0.Target.Syntax != model.MatchRegex || r0.Scope != model.ScopeDiffAndApply || r0.JSONPointers[0] != "/spec/replicas" {
		t.Errorf("ignore[0] = %+v", r0)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "app.yaml") {
		t.Errorf("errs = %v, want the one unknown ssa value with its file", errs)
	}
}

func keys(m map[string]model.Rule) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestCompileIgnoreRuleErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		typ   model.RuleType
		paths []string
		sel   string
		want  string
		whole bool
	}{
		{name: "bad regex", typ: RuleKustomizeIgnore, paths: []string{"/a"}, sel: `kind: "(("`, want: "invalid kind regex"},
		{name: "bad label selector", typ: RuleKustomizeIgnore, paths: []string{"/a"}, sel: `labelSelector: "a in (b"`, want: "invalid label selector"},
		{name: "bad annotation selector", typ: RuleKustomizeIgnore, paths: []string{"/a"}, sel: `annotationSelector: "!!"`, want: "invalid annotation selector"},
		{name: "no slash", typ: RuleKustomizeIgnore, paths: []string{"spec/replicas"}, want: "must start with '/'"},
		{name: "bad escape", typ: RuleHelmIgnore, paths: []string{"/a~2b"}, want: "unescaped '~'"},
		{name: "dash", typ: RuleHelmIgnore, paths: []string{"/spec/list/-"}, want: "names no list item"},
		{name: "root in kustomization", typ: RuleKustomizeIgnore, paths: []string{""}, want: "removes nothing in kustomize-controller"},
		{name: "root in helmrelease", typ: RuleHelmIgnore, paths: []string{""}, whole: true},
		{name: "no paths", typ: RuleHelmIgnore, want: "no paths"},
		{name: "fine", typ: RuleHelmIgnore, paths: []string{"/metadata/annotations/a~1b"}, sel: `kind: Deploy.*`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := compileTestRule(t, tc.typ, tc.paths, tc.sel)
			if tc.want == "" && r.rule.Error != "" {
				t.Fatalf("unexpected error %q", r.rule.Error)
			}
			if !strings.Contains(r.rule.Error, tc.want) {
				t.Fatalf("error %q, want %q", r.rule.Error, tc.want)
			}
			if r.rule.WholeResource != tc.whole {
				t.Fatalf("whole = %v", r.rule.WholeResource)
			}
		})
	}
}

func compileTestRule(t *testing.T, typ model.RuleType, paths []string, sel string) ignoreRule {
	t.Helper()
	k := obj(t, kustomization)
	spec := map[string]any{"paths": toAny(paths)}
	if sel != "" {
		var target map[string]any
		if err := yaml.Unmarshal([]byte("{"+sel+"}"), &target); err != nil {
			t.Fatal(err)
		}
		spec["target"] = target
	}
	_ = unstructured.SetNestedSlice(k.Object, []any{spec}, "spec", "ignore")
	kt, err := toKustomization(k)
	if err != nil {
		t.Fatal(err)
	}
	ir := kt.Spec.Ignore[0]
	return compileIgnoreRule(typ, model.ScopeDiff, ir.Paths, ir.Target, model.Origin{})
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func TestRulesFromClusterAndFiles(t *testing.T) {
	ks := obj(t, kustomization)
	hr := obj(t, strings.Replace(helmRelease, "%s", "enabled", 1))
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks, hr}},
		doc{obj: obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns, annotations: {kustomize.toolkit.fluxcd.io/ssa: Merge}}}`), file: "s.yaml"})
	rules, err := a.Rules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 4 Kustomization rules, 2 HelmRelease rules, 1 ssa mark.
	if len(rules) != 7 {
		t.Fatalf("got %d rules: %+v", len(rules), rules)
	}
	if rules[0].Origin.File != "" || rules[len(rules)-1].Origin.File != "s.yaml" {
		t.Errorf("rules not in origin order: first %+v last %+v", rules[0].Origin, rules[len(rules)-1].Origin)
	}
}

func TestOwner(t *testing.T) {
	a := newTestAdapter(t, nil, doc{obj: obj(t, kustomization), file: "ks.yaml"})
	for _, tc := range []struct {
		labels string
		want   string
		found  bool
	}{
		{`{kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}`, "Kustomization flux-system/apps", true},
		{`{kustomize.toolkit.fluxcd.io/name: other, kustomize.toolkit.fluxcd.io/namespace: flux-system}`, "Kustomization flux-system/other", false},
		{`{helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: apps, kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}`, "HelmRelease apps/web", false},
		{`{kustomize.toolkit.fluxcd.io/name: apps}`, "", false},
		{`{}`, "", false},
	} {
		o := a.Owner(obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns, labels: `+tc.labels+`}}`))
		got := ""
		if o != nil {
			got = o.Ref()
		}
		if got != tc.want || (o != nil && o.Found != tc.found) {
			t.Errorf("labels %s: owner %+v, want %q found=%v", tc.labels, o, tc.want, tc.found)
		}
		if o != nil && tc.found && (o.Interval != "10m" || !strings.Contains(o.Mode, "prune")) {
			t.Errorf("owner facts from file: %+v", o)
		}
	}
}

func TestNormalize(t *testing.T) {
	ks := obj(t, kustomization)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{ks}})
	live := liveDeployment(t, "web-1", "", "    hpa/note: x", fluxApplyAll)
	_ = unstructured.SetNestedField(live.Object, map[string]any{"replicas": int64(5)}, "status")
	_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{"containerPort": int64(80)}}, "spec", "template", "spec", "containers", "0"+"", "ports")
	out, err := a.Normalize(context.Background(), live)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(out.Object, "status"); ok {
		t.Error("status kept")
	}
	if len(out.GetManagedFields()) != 0 {
		t.Error("managedFields kept")
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(out.Object, "spec", "replicas"); ok {
		t.Error("/spec/replicas not removed by .spec.ignore[0] (web-.* Deployment)")
	}
	if _, ok := out.GetAnnotations()["hpa/note"]; ok {
		t.Error("annotation not removed by .spec.ignore[1]")
	}
	if live.GetAnnotations()["hpa/note"] != "x" {
		t.Error("Normalize changed its input")
	}
	secret := obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns}, stringData: {pw: hunter2}, data: {k: dmFsdWU=}}`)
	out, err = a.Normalize(context.Background(), secret)
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(out.Object, "data")
	if data["pw"] != "***" || data["k"] != "***" {
		t.Errorf("secret not folded and masked: %v", out.Object)
	}
}

func TestOwnedByOtherApplyManagerResolvesListKeys(t *testing.T) {
	live := liveDeployment(t, "web-1", "", "", fluxApplyAll+`
  - manager: vpa
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec: {f:template: {f:spec: {f:containers: {'k:{"name":"app"}': {f:resources: {}}}}}}
`)
	entries, _ := parseManagedFields(live)
	if other, who := ownedByOtherApplyManager(live, "/spec/template/spec/containers/0/resources", KustomizeManager, entries); !other || who != "vpa" {
		t.Errorf("resources: other=%v who=%q", other, who)
	}
	if other, _ := ownedByOtherApplyManager(live, "/spec/template/spec/containers/0/name", KustomizeManager, entries); other {
		t.Error("name owned only by kustomize-controller")
	}
	if other, _ := ownedByOtherApplyManager(live, "/spec/template/spec/containers/7/name", KustomizeManager, entries); other {
		t.Error("unresolvable index must count as sole owner (Adopt), as upstream")
	}
	for _, tc := range []struct{ m, op, sub, want string }{
		{"kubectl-edit", "Update", "", "kubectl"},
		{"kubectl", "Apply", "", "kubectl"},
		{"kubectl-client-side-apply", "Update", "", "kubectl"},
		{"before-first-apply", "Update", "", "before-first-apply"},
		{"kustomize-controller", "Update", "", "kustomize-controller"},
		{"kustomize-controller", "Apply", "", ""},
		{"kubectl-scale", "Update", "scale", ""},
		{"flux-client-side-apply", "Update", "", ""},
	} {
		c := cleanedUpBy(tc.m, tc.op, tc.sub)
		got := ""
		if c != nil {
			got = c.name
		}
		if got != tc.want {
			t.Errorf("cleanedUpBy(%s %s %s) = %q, want %q", tc.m, tc.op, tc.sub, got, tc.want)
		}
	}
}

func TestRulesFromDocumentsPositions(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "flux.yaml")
	content := `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  interval: 10m
  path: ./apps
  sourceRef: {kind: GitRepository, name: repo}
  ignore:
    - paths: ["/spec/replicas"]
    - paths: ["/spec/replicas"]
      target:
        kind: "Deploy(ment"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: apps
  annotations:
    kustomize.toolkit.fluxcd.io/ssa: Merge
`
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	docs, err := source.LoadFiles([]string{file}, nil, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rules, errs := RulesFromDocuments(docs)
	if len(rules) != 3 {
		t.Fatalf("rules: %+v", rules)
	}
	want := []struct {
		field     string
		line, col int
		bad       bool
	}{
		{".spec.ignore[0]", 12, 7, false},
		{".spec.ignore[1]", 13, 7, true},
		{".metadata.annotations[kustomize.toolkit.fluxcd.io/ssa]", 23, 5, false},
	}
	for i, w := range want {
		r := rules[i]
		if r.Origin.Field != w.field || r.Origin.File != file || r.Origin.Line != w.line || r.Origin.Column != w.col || (r.Error != "") != w.bad {
			t.Errorf("rule %d: origin %+v error %q, want %s at %d:%d bad=%v", i, r.Origin, r.Error, w.field, w.line, w.col, w.bad)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), file+":13:7") || !strings.Contains(errs[0].Error(), "invalid kind regex") {
		t.Errorf("errs = %v", errs)
	}
}

// TestKeysMatchUpstream pins the literal keys to the typed APIs' values.
func TestKeysMatchUpstream(t *testing.T) {
	for got, want := range map[string]string{
		kustomizeGroup:    kustomizev1.GroupVersion.Group,
		helmGroup:         helmv2.GroupVersion.Group,
		DriftDetectionKey: helmv2.DriftDetectionMetadataKey,
	} {
		if got != want {
			t.Errorf("%q != upstream %q", got, want)
		}
	}
}
