package argocd

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// namespacedReader fakes a user who may only read in some namespaces.
type namespacedReader struct {
	allowed map[string]bool
	objects []*unstructured.Unstructured
	lists   []string
	gets    int
}

func (r *namespacedReader) Get(_ context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	r.gets++
	gr := schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}
	if !r.allowed[ns] {
		return nil, apierrors.NewForbidden(gr, name, nil)
	}
	for _, o := range r.objects {
		if o.GroupVersionKind() == gvk && o.GetNamespace() == ns && o.GetName() == name {
			return o.DeepCopy(), nil
		}
	}
	return nil, apierrors.NewNotFound(gr, name)
}

func (r *namespacedReader) List(_ context.Context, gvk schema.GroupVersionKind, ns, _ string) ([]unstructured.Unstructured, error) {
	r.lists = append(r.lists, ns)
	if !r.allowed[ns] {
		return nil, apierrors.NewForbidden(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, "", nil)
	}
	var out []unstructured.Unstructured
	for _, o := range r.objects {
		if o.GroupVersionKind() == gvk && o.GetNamespace() == ns {
			out = append(out, *o.DeepCopy())
		}
	}
	return out, nil
}

func TestJudgeWithNamespacedRBAC(t *testing.T) {
	dir := "testdata/parity/cases/app-pointer-replicas"
	app := readTestObject(t, dir+"/application.yaml")
	app.SetNamespace("team-a")
	live := readTestObject(t, dir+"/live.json")
	live.SetAnnotations(map[string]string{AnnotationTrackingID: "team-a_parity:apps/Deployment:argo-parity/app-pointer-replicas"})
	r := &namespacedReader{allowed: map[string]bool{"argocd": true, "team-a": true}, objects: []*unstructured.Unstructured{app}}
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
	if len(r.lists) != 2 || r.lists[0] != "" || r.lists[1] != "argocd" {
		t.Fatalf("lists = %q, want all namespaces then the control plane", r.lists)
	}
	if len(rep.Owners) != 1 || !rep.Owners[0].Found {
		t.Fatalf("owners = %+v", rep.Owners)
	}
	// A Forbidden argocd-cm is a warning note, not an error.
	r.allowed["argocd"] = false
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
	r := &namespacedReader{allowed: map[string]bool{"argocd": true, "": true}, objects: []*unstructured.Unstructured{cm}}
	a, _ := New(Options{Reader: r})
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "shop", "labels": map[string]any{DefaultInstanceLabelKey: "shop"}}}}
	if o := a.Owner(obj); o != nil {
		t.Fatalf("owner before Load = %+v (default annotation tracking)", o)
	}
	if r.gets != 0 || len(r.lists) != 0 {
		t.Fatal("Owner read the cluster")
	}
	a.Load(context.Background())
	if o := a.Owner(obj); o == nil || o.Name != "shop" || o.Via != "label "+DefaultInstanceLabelKey {
		t.Fatalf("owner after Load = %+v", o)
	}
}
