package argocd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// judgeCase runs Judge on a parity case (real live object with real
// managedFields) with the given drifts already in the report.
func judgeCase(t *testing.T, name string, mutateApp func(*unstructured.Unstructured), drifts ...model.FieldDrift) *model.Report {
	t.Helper()
	dir := filepath.Join("testdata/parity/cases", name)
	var inputs []Input
	for _, f := range []string{"application.yaml", "argocd-cm.yaml", "argocd-cmd-params-cm.yaml"} {
		u := readTestObject(t, filepath.Join(dir, f))
		if u == nil {
			continue
		}
		if f == "application.yaml" && mutateApp != nil {
			mutateApp(u)
		}
		inputs = append(inputs, Input{Object: u, File: filepath.Join(dir, f)})
	}
	if mutateApp != nil && !hasApp(inputs) {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": "parity", "namespace": "argocd"}}}
		mutateApp(u)
		inputs = append(inputs, Input{Object: u})
	}
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Inputs: inputs, GVKParser: parser})
	if err != nil {
		t.Fatal(err)
	}
	live := readTestObject(t, filepath.Join(dir, "live.json"))
	desired := readTestObject(t, filepath.Join(dir, "desired.yaml"))
	rep := model.NewReport(model.ResourceID{Group: live.GroupVersionKind().Group, Version: "v1", Kind: live.GetKind(), Namespace: live.GetNamespace(), Name: live.GetName()}, model.SourceFile)
	rep.Drifts = append(rep.Drifts, drifts...)
	if err := a.Judge(context.Background(), model.JudgeInput{Live: live, Desired: desired, Report: rep}); err != nil {
		t.Fatal(err)
	}
	return rep
}

func hasApp(in []Input) bool {
	for _, i := range in {
		if i.Object.GetKind() == "Application" {
			return true
		}
	}
	return false
}

func argoVerdict(t *testing.T, rep *model.Report, path string) model.Verdict {
	t.Helper()
	return testutil.Verdict(t, rep, path, Engine)
}

var replicas = model.FieldDrift{Path: "/spec/replicas", Change: model.Changed, Desired: int64(2), Live: int64(5)}

func TestJudgeIgnoredByApplicationPointer(t *testing.T) {
	rep := judgeCase(t, "app-pointer-replicas", nil, replicas)
	v := argoVerdict(t, rep, "/spec/replicas")
	if v.Kind != model.Ignored || v.Rule == nil || v.Rule.Field != ".spec.ignoreDifferences[0]" || v.Rule.Object != "Application argocd/parity" {
		t.Fatalf("verdict = %+v (rule %+v)", v, v.Rule)
	}
	if len(rep.Owners) != 1 || rep.Owners[0].Name != "parity" || rep.Owners[0].Namespace != "argocd" || !rep.Owners[0].Found {
		t.Fatalf("owners = %+v", rep.Owners)
	}
}

func TestJudgeGroupTypoWhyNot(t *testing.T) {
	rep := judgeCase(t, "app-group-typo", nil, replicas)
	if v := argoVerdict(t, rep, "/spec/replicas"); v.Kind != model.Reported {
		t.Fatalf("verdict = %+v", v)
	}
	n := testutil.Note(rep, "group-mismatch")
	if n == nil || !strings.Contains(n.Message, `did you mean "apps"`) || n.Rule == nil || n.Rule.Field != ".spec.ignoreDifferences[0]" {
		t.Fatalf("group-mismatch note = %+v, notes %+v", n, rep.Notes)
	}
}

func TestJudgeSelfHealReverts(t *testing.T) {
	rep := judgeCase(t, "scale-no-rule", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, true, "spec", "syncPolicy", "automated", "selfHeal")
	}, replicas)
	if v := argoVerdict(t, rep, "/spec/replicas"); v.Kind != model.Reverted {
		t.Fatalf("verdict = %+v", v)
	}
	if !rep.Owners[0].SelfHeal || !rep.Owners[0].AutoSync {
		t.Fatalf("owner = %+v", rep.Owners[0])
	}
}

func TestJudgeAutoSyncWithoutSelfHealReports(t *testing.T) {
	rep := judgeCase(t, "scale-no-rule", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, true, "spec", "syncPolicy", "automated", "prune")
	}, replicas)
	v := argoVerdict(t, rep, "/spec/replicas")
	if v.Kind != model.Reported || !strings.Contains(v.Reason, "without selfHeal") {
		t.Fatalf("verdict = %+v", v)
	}
}

func TestJudgeManagersRemoveImage(t *testing.T) {
	p := "/spec/template/spec/containers/0/image"
	rep := judgeCase(t, "mgr-set-image", nil, model.FieldDrift{Path: p, Change: model.Changed, Desired: "nginx:1.25", Live: "nginx:1.27"})
	v := argoVerdict(t, rep, p)
	if v.Kind != model.Ignored || !strings.Contains(v.Reason, "manager kubectl-set") {
		t.Fatalf("verdict = %+v", v)
	}
}

func TestJudgeManagersWithoutSchema(t *testing.T) {
	// Without the GVK parser lists are atomic: Argo (and we) keep the
	// image drift, and we say why.
	dir := "testdata/parity/cases/mgr-set-image"
	a, err := New(Options{Inputs: []Input{{Object: readTestObject(t, dir+"/application.yaml")}}})
	if err != nil {
		t.Fatal(err)
	}
	p := "/spec/template/spec/containers/0/image"
	rep := model.NewReport(model.ResourceID{Group: "apps", Kind: "Deployment", Name: "mgr-set-image"}, model.SourceFile)
	rep.Drifts = []model.FieldDrift{{Path: p, Change: model.Changed}}
	if err := a.Judge(context.Background(), model.JudgeInput{Live: readTestObject(t, dir+"/live.json"), Desired: readTestObject(t, dir+"/desired.yaml"), Report: rep}); err != nil {
		t.Fatal(err)
	}
	if n := testutil.Note(rep, "no-schema"); n == nil {
		t.Fatalf("no no-schema note: %+v", rep.Notes)
	}
	if v := argoVerdict(t, rep, p); v.Kind == model.Ignored {
		t.Fatalf("verdict = %+v, want the drift kept without a schema", v)
	}
}

func TestJudgeManagerNeverSeen(t *testing.T) {
	p := "/spec/template/spec/containers/0/image"
	rep := judgeCase(t, "mgr-wrong-name", nil, model.FieldDrift{Path: p, Change: model.Changed})
	n := testutil.Note(rep, "manager-not-seen")
	if n == nil || !strings.Contains(n.Message, "kubectl-set") {
		t.Fatalf("note = %+v", n)
	}
}

func TestJudgeKindOnlyKeyManagers(t *testing.T) {
	rep := judgeCase(t, "cm-core-kind-only-managers", nil, model.FieldDrift{Path: "/data/key", Change: model.Changed})
	if v := argoVerdict(t, rep, "/data/key"); v.Kind != model.Reported {
		t.Fatalf("verdict = %+v", v)
	}
	n := testutil.Note(rep, "kind-only-key-managers")
	if n == nil || !strings.Contains(n.Message, "_ConfigMap") || n.Rule == nil || !strings.Contains(n.Rule.Field, "resource.customizations.ignoreDifferences.ConfigMap") {
		t.Fatalf("note = %+v", n)
	}
}

func TestJudgeExtraneousLabelLeftAlone(t *testing.T) {
	rep := judgeCase(t, "threeway-extra-label", nil, model.FieldDrift{Path: "/metadata/labels/extra", Change: model.Added, Live: "yes"})
	v := argoVerdict(t, rep, "/metadata/labels/extra")
	if v.Kind != model.LeftAlone || !strings.Contains(v.Reason, "last-applied") {
		t.Fatalf("verdict = %+v", v)
	}
}

func TestJudgePointerAbsentAndJQTimeout(t *testing.T) {
	rep := judgeCase(t, "app-pointer-absent", nil, replicas)
	if n := testutil.Note(rep, "pointer-absent"); n == nil || !strings.Contains(n.Message, "/spec/paused") {
		t.Fatalf("pointer-absent note = %+v", n)
	}
	rep = judgeCase(t, "jq-never-ends", nil, replicas)
	if n := testutil.Note(rep, "jq-timeout"); n == nil || n.Level != model.NoteError {
		t.Fatalf("jq-timeout note = %+v (notes %+v)", n, rep.Notes)
	}
	if v := argoVerdict(t, rep, "/spec/replicas"); v.Kind != model.Reported {
		t.Fatalf("verdict = %+v", v)
	}
}

func TestJudgeInvalidJQIsComparisonError(t *testing.T) {
	rep := judgeCase(t, "jq-invalid-syntax", nil, replicas)
	if n := testutil.Note(rep, "comparison-error"); n == nil {
		t.Fatalf("no comparison-error note: %+v", rep.Notes)
	}
	if n := testutil.Note(rep, "invalid-rule"); n == nil || n.Rule == nil {
		t.Fatalf("no invalid-rule note: %+v", rep.Notes)
	}
}

func TestJudgeStatusIgnoredByCompareOptions(t *testing.T) {
	rep := judgeCase(t, "status-default-all", nil, model.FieldDrift{Path: "/status/phase", Change: model.Changed})
	v := argoVerdict(t, rep, "/status/phase")
	if v.Kind != model.Ignored || v.Rule == nil || !strings.Contains(v.Rule.Field, "ignoreResourceStatusField") {
		t.Fatalf("verdict = %+v rule %+v", v, v.Rule)
	}
}

func TestJudgeExcludedResource(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"},
		"data":     map[string]any{"resource.exclusions": "- apiGroups: [apps]\n  kinds: [Deployment]\n"}}}
	a, err := New(Options{Inputs: []Input{{Object: cm, File: "argocd-cm.yaml"}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := "testdata/parity/cases/scale-no-rule"
	rep := model.NewReport(model.ResourceID{Group: "apps", Kind: "Deployment", Name: "x"}, model.SourceFile)
	rep.Drifts = []model.FieldDrift{replicas}
	if err := a.Judge(context.Background(), model.JudgeInput{Live: readTestObject(t, dir+"/live.json"), Desired: readTestObject(t, dir+"/desired.yaml"), Report: rep}); err != nil {
		t.Fatal(err)
	}
	if v := argoVerdict(t, rep, "/spec/replicas"); v.Kind != model.Excluded || v.Rule == nil || v.Rule.Field != "data[resource.exclusions][0]" {
		t.Fatalf("verdict = %+v", v)
	}
}

func TestJudgeUntrackedObjectHasNoVerdict(t *testing.T) {
	live := readTestObject(t, "testdata/parity/cases/scale-no-rule/live.json")
	live.SetAnnotations(map[string]string{AnnotationTrackingID: "parity:apps/Deployment:argo-parity/some-other-object"})
	a, _ := New(Options{})
	rep := model.NewReport(model.ResourceID{}, model.SourceFile)
	rep.Drifts = []model.FieldDrift{replicas}
	if err := a.Judge(context.Background(), model.JudgeInput{Live: live, Report: rep}); err != nil {
		t.Fatal(err)
	}
	if len(rep.Owners) != 0 || len(rep.Drifts[0].Verdicts) != 0 || testutil.Note(rep, "tracking-mismatch") == nil {
		t.Fatalf("report = %+v", rep)
	}
}

func TestOwnerOutsideControlPlaneNamespace(t *testing.T) {
	a, _ := New(Options{})
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "shop", "annotations": map[string]any{
			AnnotationTrackingID: "team-a_shop:/ConfigMap:shop/c"}}}}
	o := a.Owner(obj)
	if o == nil || o.Namespace != "team-a" || o.Name != "shop" || o.Found {
		t.Fatalf("owner = %+v", o)
	}
	obj.SetAnnotations(map[string]string{AnnotationTrackingID: "shop:/ConfigMap:shop/c"})
	if o := a.Owner(obj); o == nil || o.Namespace != "argocd" || o.Name != "shop" {
		t.Fatalf("owner = %+v", o)
	}
	// Label tracking.
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"},
		"data":     map[string]any{"application.resourceTrackingMethod": "label", "application.instanceLabelKey": "example.com/app"}}}
	a, _ = New(Options{Inputs: []Input{{Object: cm}}})
	obj.SetLabels(map[string]string{"example.com/app": "web"})
	if o := a.Owner(obj); o == nil || o.Name != "web" || !strings.Contains(o.Via, "example.com/app") {
		t.Fatalf("owner = %+v", o)
	}
}

func TestNormalizeRemovesIgnoredFields(t *testing.T) {
	dir := "testdata/parity/cases/app-pointer-replicas"
	a, _ := New(Options{Inputs: []Input{{Object: readTestObject(t, dir+"/application.yaml")}}})
	out, err := a.Normalize(context.Background(), readTestObject(t, dir+"/live.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(out.Object, "spec", "replicas"); ok {
		t.Fatal("spec.replicas still present")
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(out.Object, "metadata", "creationTimestamp"); ok {
		t.Fatal("creationTimestamp still present")
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(out.Object, "status"); ok {
		t.Fatal("status still present (v3 default ignores it)")
	}
}

func TestRulesHaveOrigins(t *testing.T) {
	dir := "testdata/parity/cases/merged-app-and-cm"
	a, _ := New(Options{Inputs: []Input{
		{Object: readTestObject(t, dir+"/application.yaml"), File: dir + "/application.yaml"},
		{Object: readTestObject(t, dir+"/argocd-cm.yaml"), File: dir + "/argocd-cm.yaml"},
	}})
	rules, err := a.Rules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, r := range rules {
		fields = append(fields, r.Origin.Object+" "+r.Origin.Field)
		if r.Engine != Engine || r.Origin.Object == "" {
			t.Errorf("rule without engine/origin: %+v", r)
		}
	}
	want := []string{
		"Application argocd/parity .spec.ignoreDifferences[0]",
		"ConfigMap argocd/argocd-cm data[resource.customizations.ignoreDifferences.apps_Deployment]",
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(fields, "\n"), w) {
			t.Errorf("missing rule %q in %q", w, fields)
		}
	}
}

func TestManagedResourcesFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "mr.json")
	live := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"scale-no-rule","namespace":"argo-parity"},"spec":{"replicas":5}}`
	pred := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"scale-no-rule","namespace":"argo-parity"},"spec":{"replicas":2}}`
	body := `{"items":[{"group":"apps","kind":"Deployment","namespace":"argo-parity","name":"scale-no-rule","modified":true,` +
		`"normalizedLiveState":` + quote(live) + `,"predictedLiveState":` + quote(pred) + `,"targetState":` + quote(pred) + `}]}`
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	c := "testdata/parity/cases/scale-no-rule"
	a, _ := New(Options{ArgoDiff: ArgoDiffOptions{File: f}})
	rep := model.NewReport(model.ResourceID{}, model.SourceFile)
	rep.Drifts = []model.FieldDrift{replicas}
	if err := a.Judge(context.Background(), model.JudgeInput{Live: readTestObject(t, c+"/live.json"), Desired: readTestObject(t, c+"/desired.yaml"), Report: rep}); err != nil {
		t.Fatal(err)
	}
	n := testutil.Note(rep, "argocd-api")
	if n == nil || !strings.Contains(n.Message, "OutOfSync") || !strings.Contains(n.Message, "/spec/replicas") {
		t.Fatalf("note = %+v", n)
	}
	if _, err := ParseManagedResources([]byte(`{"items":[{"kind":""}]}`)); err == nil {
		t.Fatal("item without kind accepted")
	}
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// TestJudgeConcurrent: scan judges many objects with one adapter; shared
// rules (compiled once, jq timeouts memoized) must be safe (run with -race).
func TestJudgeConcurrent(t *testing.T) {
	dir := "testdata/parity/cases/jq-never-ends"
	a, err := New(Options{Inputs: []Input{{Object: readTestObject(t, dir+"/application.yaml")}}, JQTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	live, desired := readTestObject(t, dir+"/live.json"), readTestObject(t, dir+"/desired.yaml")
	var wg sync.WaitGroup
	reports := make([]*model.Report, 8)
	for i := range reports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep := model.NewReport(model.ResourceID{}, model.SourceFile)
			rep.Drifts = []model.FieldDrift{replicas}
			if err := a.Judge(context.Background(), model.JudgeInput{Live: live.DeepCopy(), Desired: desired.DeepCopy(), Report: rep}); err != nil {
				t.Error(err)
			}
			reports[i] = rep
		}()
	}
	wg.Wait()
	for _, rep := range reports {
		if testutil.Note(rep, "jq-timeout") == nil || argoVerdict(t, rep, "/spec/replicas").Kind != model.Reported {
			t.Fatalf("report = %+v", rep)
		}
	}
}

// TestJudgeInferredManagers: with the desired state inferred from
// managedFields (no -f), a drift owned by a trusted manager is ignored, as
// Argo would against its rendered desired state.
func TestJudgeInferredManagers(t *testing.T) {
	dir := "testdata/parity/cases/mgr-set-image"
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := New(Options{Inputs: []Input{{Object: readTestObject(t, dir+"/application.yaml")}}, GVKParser: parser})
	p := "/spec/template/spec/containers/0/image"
	rep := model.NewReport(model.ResourceID{}, model.SourceManagedFields)
	rep.Drifts = []model.FieldDrift{
		{Path: p, Change: model.Changed, Managers: []model.ManagerRef{{Manager: "kubectl-set", Operation: "Update"}}},
		{Path: "/spec/replicas", Change: model.Changed, Managers: []model.ManagerRef{{Manager: "kubectl", Operation: "Update", Subresource: "scale"}}},
	}
	if err := a.Judge(context.Background(), model.JudgeInput{Live: readTestObject(t, dir+"/live.json"), Report: rep}); err != nil {
		t.Fatal(err)
	}
	if v := argoVerdict(t, rep, p); v.Kind != model.Ignored || !strings.Contains(v.Reason, "kubectl-set") {
		t.Fatalf("image verdict = %+v", v)
	}
	// live.json's replicas are the 2 argocd-controller applied (its
	// last-applied-configuration says so): whoever owns the field, Argo
	// CD's 3-way diff against that last sync finds nothing to revert.
	if v := argoVerdict(t, rep, "/spec/replicas"); v.Kind != model.LeftAlone {
		t.Fatalf("replicas verdict = %+v", v)
	}
}
