package suggest

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestHolders: an owner's engine object comes from --rules first, then
// from the cluster (one GET); one the cluster refuses, or that is not in
// --rules offline, is a missing line naming it; owners not judged and
// kinds that hold no rules are skipped.
func TestHolders(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "toy.example.com", Version: "v1", Kind: "ToyApp"}
	toy := suggestapi.Semantics{Engine: "toy", Holders: []suggestapi.Holder{{GVK: gvk, Rules: []string{"spec", "ignore"}}}}
	app := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("ops")
		u.SetName(name)
		return u
	}
	owner := func(name string) model.Owner {
		return model.Owner{Engine: "toy", Kind: "ToyApp", Namespace: "ops", Name: name}
	}
	docs := []source.Document{{Object: app("from-file")}}
	owners := []model.Owner{owner("from-file"), owner("from-cluster"), owner("absent"),
		{Engine: "toy", Kind: "ToyApp", Namespace: "ops", Name: "not-judged", NotJudged: true},
		{Engine: "toy", Kind: "Other", Namespace: "ops", Name: "no-rules"}}
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{app("from-cluster"), app("not-judged")}}

	got, missing := Holders(context.Background(), owners, []suggestapi.Semantics{toy}, docs, reader)
	var names []string
	for _, h := range got {
		names = append(names, h.Object.GetName())
	}
	if strings.Join(names, ",") != "from-file,from-cluster" || reader.Gets != 2 {
		t.Errorf("holders %v after %d GETs; want from-file (--rules, no GET), from-cluster, and one GET for absent", names, reader.Gets)
	}
	if len(missing) != 1 || !strings.HasPrefix(missing[0], "ToyApp ops/absent: ") || strings.Contains(missing[0], "\n") {
		t.Errorf("missing %q; want one line for ToyApp ops/absent", missing)
	}

	got, missing = Holders(context.Background(), owners, []suggestapi.Semantics{toy}, docs, nil)
	if len(got) != 1 || strings.Join(missing, "|") != "ToyApp ops/from-cluster: not in --rules|ToyApp ops/absent: not in --rules" {
		t.Errorf("offline: %d holders, missing %q; want from-file, the other two not in --rules", len(got), missing)
	}
}
