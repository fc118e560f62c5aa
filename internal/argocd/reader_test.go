package argocd

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func TestJudgeWithNamespacedRBAC(t *testing.T) {
	dir := "testdata/parity/cases/app-pointer-replicas"
	app := readTestObject(t, dir+"/application.yaml")
	app.SetNamespace("team-a")
	live := readTestObject(t, dir+"/live.json")
	live.SetAnnotations(map[string]string{AnnotationTrackingID: "team-a_parity:apps/Deployment:argo-parity/app-pointer-replicas"})
	r := &testutil.Reader{Allowed: map[string]bool{"argocd": true, "team-a": true}, Objects: []*unstructured.Unstructured{app}}
	a, err := New(Options{Reader: r})
	if err != nil {
		t.Fatal(err)
	}
	rep := model.NewReport(model.ResourceID{}, model.SourceFile)
	rep.Drifts = []model.FieldDrift{replicas}
	if err := a.Judge(context.Background(), model.JudgeInput{Live: live, Desired: readTestObject(t, dir+"/desired.yaml"), Report: rep}); err != nil {
		t.Fatal(err)
	}
	if v := argoVerdict(t, rep, "/spec/replicas"); v.Kind != model.Ignored || v.Rule == nil || v.Rule.Object != "Application team-a/parity" {
		t.Fatalf("verdict = %+v", v)
	}
	if len(r.Lists) != 2 || r.Lists[0] != "" || r.Lists[1] != "argocd" {
		t.Fatalf("lists = %q, want all namespaces then the control plane", r.Lists)
	}
	if len(rep.Owners) != 1 || !rep.Owners[0].Found {
		t.Fatalf("owners = %+v", rep.Owners)
	}
	// A Forbidden argocd-cm is a warning note, not an error.
	r.Allowed["argocd"] = false
	a, _ = New(Options{Reader: r})
	rep = model.NewReport(model.ResourceID{}, model.SourceFile)
	rep.Drifts = []model.FieldDrift{replicas}
	if err := a.Judge(context.Background(), model.JudgeInput{Live: live, Report: rep}); err != nil {
		t.Fatal(err)
	}
	if n := testutil.Note(rep, "read-failed"); n == nil || n.Level != model.NoteWarning {
		t.Fatalf("notes = %+v", rep.Notes)
	}
}

func TestLoadBeforeOwnerUsesClusterTracking(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"},
		"data":     map[string]any{"application.resourceTrackingMethod": "label"}}}
	r := &testutil.Reader{Allowed: map[string]bool{"argocd": true, "": true}, Objects: []*unstructured.Unstructured{cm}}
	a, _ := New(Options{Reader: r})
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "shop", "labels": map[string]any{DefaultInstanceLabelKey: "shop"}}}}
	if o := a.Owner(obj); o != nil {
		t.Fatalf("owner before Load = %+v (default annotation tracking)", o)
	}
	if r.Gets != 0 || len(r.Lists) != 0 {
		t.Fatal("Owner read the cluster")
	}
	a.Load(context.Background())
	if o := a.Owner(obj); o == nil || o.Name != "shop" || o.Via != "label "+DefaultInstanceLabelKey {
		t.Fatalf("owner after Load = %+v", o)
	}
}
