package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// The testdata/explain/*-live.yaml objects were saved from the real API
// server of hack/cluster.sh with `kubectl get -o yaml --show-managed-fields`
// after real kubectl operations; their managedFields are the server's.
func loadObject(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	return testutil.ReadObject(t, "testdata", "explain", name)
}

func parseIndex(t *testing.T, obj *unstructured.Unstructured) *managedfields.Index {
	t.Helper()
	ix, err := managedfields.Parse(obj)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestInferDriftsFromKubectlEdits(t *testing.T) {
	live := loadObject(t, "deployment-kubectl-edits-live.yaml")
	ix := parseIndex(t, live)
	drifts, notes := inferDrifts(live, ix)
	r := &model.Report{Drifts: drifts}
	drift.Attribute(r, live, ix)

	type row struct{ FieldPath, Change, Manager, Sub string }
	var got []row
	for _, d := range r.Drifts {
		if d.Desired != nil {
			t.Errorf("%s: desired %v claimed without last-applied", d.FieldPath, d.Desired)
		}
		if d.Cause != model.CauseManual {
			t.Errorf("%s: cause %s, want manual", d.FieldPath, d.Cause)
		}
		got = append(got, row{d.FieldPath, string(d.Change), d.Managers[0].Manager, d.Managers[0].Subresource})
	}
	want := []row{
		{".metadata.annotations.oncall", "added", "kubectl-patch", ""},
		{".metadata.labels.hotfix", "added", "kubectl-label", ""},
		{".spec.replicas", "changed", "kubectl", "scale"},
		{".spec.template.spec.containers[name=app].image", "changed", "kubectl-set", ""},
		{".spec.template.spec.containers[name=sidecar].image", "changed", "kubectl-edit", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inferred drifts (-want +got):\n%s", diff)
	}
	if len(notes) != 1 || notes[0].Reason != "values-unknown" {
		t.Errorf("notes = %+v, want the values-unknown note", notes)
	}
}

func TestInferDriftsUsesGitOpsLastApplied(t *testing.T) {
	live := loadObject(t, "deployment-argocd-client-side-live.yaml")
	ix := parseIndex(t, live)
	drifts, notes := inferDrifts(live, ix)
	got := map[string]string{}
	for _, d := range drifts {
		got[d.FieldPath] = fmt.Sprintf("%v -> %v", d.Desired, d.Live)
	}
	want := map[string]string{
		".spec.replicas": "2 -> 4",
		".spec.template.spec.containers[name=api].image": "nginx:1.27 -> nginx:1.29",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drifts (-want +got):\n%s", diff)
	}
	if len(notes) != 1 || notes[0].Reason != "last-applied" || !strings.Contains(notes[0].Message, "argocd-controller") {
		t.Errorf("notes = %+v", notes)
	}
}

func TestInferDriftsWithoutGitOpsManager(t *testing.T) {
	live := loadObject(t, "deployment-no-gitops-live.yaml")
	drifts, notes := inferDrifts(live, parseIndex(t, live))
	if len(drifts) != 0 {
		t.Errorf("drifts on an object no engine manages: %+v", drifts)
	}
	if len(notes) != 1 || notes[0].Reason != "no-gitops-manager" {
		t.Errorf("notes = %+v", notes)
	}
}

func TestInferDriftsSkipsStatusAndControllers(t *testing.T) {
	live := loadObject(t, "deployment-kubectl-edits-live.yaml")
	obj := live.DeepCopy()
	mf, _, _ := unstructured.NestedSlice(obj.Object, "metadata", "managedFields")
	mf = append(mf,
		map[string]any{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1", "time": "2026-12-02T14:20:00Z",
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:deployment.kubernetes.io/revision": map[string]any{}}}}},
		map[string]any{"manager": "kube-controller-manager", "operation": "Update", "subresource": "status", "apiVersion": "apps/v1", "time": "2026-12-02T14:20:00Z",
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:status": map[string]any{"f:replicas": map[string]any{}}}},
	)
	_ = unstructured.SetNestedSlice(obj.Object, mf, "metadata", "managedFields")
	_ = unstructured.SetNestedField(obj.Object, "3", "metadata", "annotations", "deployment.kubernetes.io/revision")
	_ = unstructured.SetNestedField(obj.Object, int64(5), "status", "replicas")

	drifts, notes := inferDrifts(obj, parseIndex(t, obj))
	for _, d := range drifts {
		if strings.Contains(d.Path, "revision") || strings.HasPrefix(d.Path, "/status") {
			t.Errorf("controller/status field reported as drift: %s", d.Path)
		}
	}
	if len(drifts) != 5 {
		t.Errorf("got %d drifts, want the 5 manual ones", len(drifts))
	}
	found := false
	for _, n := range notes {
		if n.Reason == "controller-fields" && strings.HasPrefix(n.Message, "1 field") {
			found = true
		}
	}
	if !found {
		t.Errorf("no note about the controller-owned field: %+v", notes)
	}
}

func TestPickDocument(t *testing.T) {
	obj := func(apiVersion, kind, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
		u.SetName(name)
		if ns != "" {
			u.SetNamespace(ns)
		}
		return u
	}
	live := obj("apps/v1", "Deployment", "shop", "web")
	docs := []*unstructured.Unstructured{
		obj("v1", "ConfigMap", "shop", "web"),
		obj("apps/v1", "Deployment", "other", "web"),
		obj("apps/v1beta1", "Deployment", "", "web"), // same group, namespace from default
	}
	got, err := drift.PickDocument(docs, live, "shop")
	if err != nil || got != docs[2] {
		t.Fatalf("PickDocument = %v, %v; want the namespace-less apps Deployment", got, err)
	}
	if _, err := drift.PickDocument(docs, live, "default"); err == nil ||
		!strings.Contains(err.Error(), "no document is Deployment.apps shop/web") || !strings.Contains(err.Error(), "ConfigMap shop/web") {
		t.Errorf("mismatch error = %v", err)
	}
	if _, err := drift.PickDocument(nil, live, "shop"); err == nil || !strings.Contains(err.Error(), "no Kubernetes object found") {
		t.Errorf("empty error = %v", err)
	}
	// Cluster-scoped objects match without a namespace.
	nsLive := obj("v1", "Namespace", "", "shop")
	if got, err := drift.PickDocument([]*unstructured.Unstructured{obj("v1", "Namespace", "", "shop")}, nsLive, "default"); err != nil || got == nil {
		t.Errorf("cluster-scoped: %v, %v", got, err)
	}
}

func TestCauseOf(t *testing.T) {
	for _, tc := range []struct {
		ms   []model.ManagerRef
		want model.CauseClass
	}{
		{nil, model.CauseUnknown},
		{[]model.ManagerRef{{Manager: "kustomize-controller", Class: model.CauseGitOps}}, model.CauseUnknown},
		{[]model.ManagerRef{{Manager: "kustomize-controller", Class: model.CauseGitOps}, {Manager: "kube-controller-manager", Subresource: "scale", Class: model.CauseAutoscaler}}, model.CauseAutoscaler},
		{[]model.ManagerRef{{Manager: "kubectl-edit", Operation: "Update"}}, model.CauseManual},
	} {
		if got := drift.CauseOf(tc.ms); got != tc.want {
			t.Errorf("causeOf(%+v) = %s, want %s", tc.ms, got, tc.want)
		}
	}
}

func testOptions(t *testing.T) (*ExplainOptions, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	g := &GlobalOptions{Frontend: KubectlFrontend, Engine: "auto", IOStreams: genericiooptions.IOStreams{In: in, Out: out, ErrOut: errOut}}
	o := NewExplainOptions(g)
	o.now = func() time.Time { return time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC) }
	// No $COLUMNS and no terminal: text is not cut (as kubectl get), and
	// no KUBECTL_EXTERNAL_DIFF, whatever the developer's environment.
	o.getenv = func(string) string { return "" }
	return o, out, errOut
}

func noAdapters(context.Context, *ExplainOptions, *unstructured.Unstructured) ([]model.Adapter, []model.Note, error) {
	return nil, nil, nil
}

func TestExplainValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(o *ExplainOptions)
		err  string
	}{
		{"ok", func(o *ExplainOptions) {}, ""},
		{"bad output", func(o *ExplainOptions) { o.Output = "xml" }, `unknown output format "xml"`},
		{"bad engine", func(o *ExplainOptions) { o.Engine = "jenkins" }, "invalid --engine"},
		{"-f and -k", func(o *ExplainOptions) { o.Filenames = []string{"a"}; o.Kustomize = "d" }, "mutually exclusive"},
		{"two stdins", func(o *ExplainOptions) { o.Filenames = []string{"-"}; o.LiveFile = "-" }, "only one of -f and --live-file"},
		{"no object", func(o *ExplainOptions) { o.args = nil }, "expected exactly one object"},
		{"live file without object", func(o *ExplainOptions) { o.args = nil; o.LiveFile = "x.yaml" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, _ := testOptions(t)
			o.args = []string{"deploy/web"}
			tc.mod(o)
			err := o.Validate()
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Validate() = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestExplainLiveFileGoldens runs the whole command offline (--live-file)
// and compares its output with testdata/explain/<case>.golden.
func TestExplainLiveFileGoldens(t *testing.T) {
	// Most cases run without engine adapters, so they pin explain's own
	// work (drifts, attribution, layout); the "-engines" cases run the real
	// Argo CD and Flux adapters offline, as the command does.
	for _, tc := range []struct {
		name     string
		args     []string
		live     string
		desired  string
		format   string
		engines  bool
		wantCode int
		rules    string
	}{
		{"kubectl-edits-inferred-text", []string{"deploy/web"}, "deployment-kubectl-edits-live.yaml", "", "text", false, ExitDrift, ""},
		{"kubectl-edits-file-text", nil, "deployment-kubectl-edits-live.yaml", "deployment-kubectl-edits-desired.yaml", "text", false, ExitDrift, ""},
		{"kubectl-edits-inferred-json", []string{"deployments.apps", "web"}, "deployment-kubectl-edits-live.yaml", "", "json", false, ExitDrift, ""},
		{"kubectl-edits-file-engines-text", nil, "deployment-kubectl-edits-live.yaml", "deployment-kubectl-edits-desired.yaml", "text", true, ExitDrift, ""},
		{"argocd-client-side-inferred-text", []string{"deploy/api"}, "deployment-argocd-client-side-live.yaml", "", "text", false, ExitDrift, ""},
		{"argocd-client-side-inferred-engines-text", []string{"deploy/api"}, "deployment-argocd-client-side-live.yaml", "", "text", true, ExitDrift, ""},
		{"kubectl-edits-file-engines-diff", nil, "deployment-kubectl-edits-live.yaml", "deployment-kubectl-edits-desired.yaml", "diff", true, ExitDrift, ""},
		{"argocd-client-side-rules-engines-diff", []string{"deploy/api"}, "deployment-argocd-client-side-live.yaml", "deployment-argocd-client-side-desired.yaml", "diff", true, ExitDrift, "application-shop.yaml"},
		{"no-gitops-inferred-text", nil, "deployment-no-gitops-live.yaml", "", "text", false, ExitNoDrift, ""},
		{"argocd-client-side-rules-engines-text", []string{"deploy/api"}, "deployment-argocd-client-side-live.yaml", "deployment-argocd-client-side-desired.yaml", "text", true, ExitDrift, "application-shop.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, out, _ := testOptions(t)
			if !tc.engines {
				o.newAdapters = noAdapters
			}
			if tc.rules != "" {
				o.Rules = []string{filepath.Join("testdata", "explain", tc.rules)}
			}
			o.LiveFile = filepath.Join("testdata", "explain", tc.live)
			if tc.desired != "" {
				o.Filenames = []string{filepath.Join("testdata", "explain", tc.desired)}
			}
			o.Output = tc.format
			if err := o.Complete(nil, tc.args); err != nil {
				t.Fatal(err)
			}
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			err := o.Run(context.Background())
			code := ExitNoDrift
			var ee *ExitError
			if errors.As(err, &ee) {
				code = ee.Code
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d (err %v)", code, tc.wantCode, err)
			}
			testutil.Golden(t, filepath.Join("testdata", "explain", tc.name+".golden"), out.Bytes())
		})
	}
}

func TestExplainLiveFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, live string
		args       []string
		err        string
	}{
		{"wrong name", "deployment-kubectl-edits-live.yaml", []string{"deploy/other"}, `holds no deploy named "other"`},
		{"wrong type", "deployment-kubectl-edits-live.yaml", []string{"statefulset/web"}, `holds no statefulset named "web"`},
		{"missing file", "does-not-exist.yaml", []string{"deploy/web"}, "does-not-exist.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, _ := testOptions(t)
			o.LiveFile = filepath.Join("testdata", "explain", tc.live)
			if err := o.Complete(nil, tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Run(context.Background())
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitFailure || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Run() = %v, want exit 2 with %q", err, tc.err)
			}
		})
	}
}

// inferDrifts runs the inference explain uses when no manifest is given.
func inferDrifts(live *unstructured.Unstructured, ix *managedfields.Index) ([]model.FieldDrift, []model.Note) {
	inf := diff.Infer(live, ix, diff.InferOptions{})
	return inf.Drifts, inf.Notes
}
