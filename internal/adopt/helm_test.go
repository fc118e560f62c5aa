package adopt

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func TestHelmValues(t *testing.T) {
	dir := testutil.CopyTree(t, "testdata/chart", t.TempDir())
	obj := Object{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	h := HelmLocator{Chart: dir}
	edits, skips, err := Plan(h, obj, nil, []Field{
		{Pointer: "/spec/replicas", Value: 3.0},
		{Pointer: "/spec/template/spec/containers/0/resources/limits/cpu", Value: "200m"},
		{Pointer: "/spec/template/spec/containers/0/resources/limits/memory", Value: "256Mi"},
		// image is "repo:tag" built by the template: printed, not written.
		{Pointer: "/spec/template/spec/containers/0/image", Value: "shop/web:1.4.1"},
		// a pointer the template does not set from values.
		{Pointer: "/metadata/labels/app", Value: "web"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(edits) != 1 || edits[0].File.Path != filepath.Join(dir, "values.yaml") {
		t.Fatalf("edits: %+v", edits)
	}
	golden(t, "chart-values.golden.yaml", edits[0].After)
	if len(skips) != 2 {
		t.Fatalf("skips: %+v", skips)
	}
	for _, s := range skips {
		if s.Reason != ReasonTemplate || s.Value == nil {
			t.Errorf("skip %+v: want a template refusal carrying the value", s)
		}
	}
}

func TestHelmNoTemplate(t *testing.T) {
	_, err := HelmLocator{Chart: "testdata/chart"}.Locate(Object{Kind: "Service", Name: "web"}, "/spec/type", nil)
	var ee *EditError
	if err == nil || errors.As(err, &ee) {
		t.Fatalf("got %v, want a plain error", err)
	}
}
