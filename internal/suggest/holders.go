package suggest

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
)

// Holders reads the engine objects that reconcile the object, as its
// report's owners name them (owners an engine did not judge left out),
// each in the kind its engine holds rules in: from docs (--rules) first,
// then with reader (one GET each, read-only; nil: offline). The second
// result says, one line each, which holders could not be read: their
// rules are then not checked.
func Holders(ctx context.Context, owners []model.Owner, engines []suggestapi.Semantics, docs []source.Document, reader model.Reader) ([]EngineObject, []string) {
	var out []EngineObject
	var missing []string
	for _, ow := range owners {
		if ow.NotJudged {
			continue
		}
		var e suggestapi.Semantics
		var h suggestapi.Holder
		for _, c := range engines {
			if c.Engine == ow.Engine {
				e = c
				h, _ = c.Holder(ow.Kind)
			}
		}
		if h.GVK.Kind == "" {
			continue
		}
		var found *unstructured.Unstructured
		for _, d := range docs {
			if d.Object != nil && d.Object.GetKind() == ow.Kind && d.Object.GetName() == ow.Name && d.Object.GetNamespace() == ow.Namespace {
				found = d.Object
			}
		}
		if found == nil && reader != nil {
			if u, err := reader.Get(ctx, h.GVK, ow.Namespace, ow.Name); err == nil {
				found = u
			} else {
				missing = append(missing, fmt.Sprintf("%s: %s", ow.Ref(), strings.Join(strings.Fields(err.Error()), " ")))
			}
		}
		if found == nil {
			if reader == nil {
				missing = append(missing, ow.Ref()+": not in --rules")
			}
			continue
		}
		out = append(out, EngineObject{Object: found, Engine: e})
	}
	return out, missing
}
