package argocd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/fieldpath"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// DryRunner performs a server-side apply dry-run of obj as manager and
// returns what the API server would store. It needs patch RBAC and
// persists nothing.
type DryRunner func(ctx context.Context, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error)

// NewRESTDryRunner is the DryRunner of Argo CD's server-side diff
// (gitops-engine K8sServerSideDryRunner: apply --server-side
// --dry-run=server --force-conflicts as argocd-controller).
func NewRESTDryRunner(cfg *rest.Config) (DryRunner, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return func(ctx context.Context, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
		out := obj.DeepCopy()
		//nolint:staticcheck // a server-side apply of an unstructured object, as Argo CD sends it.
		if err := c.Patch(ctx, out, client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner(manager)); err != nil {
			return nil, err
		}
		return out, nil
	}, nil
}

// serverSideDiff mirrors gitops-engine pkg/diff/diff.go serverSideDiff:
// the desired object (remarshalled, without the ignore normalization) is
// dry-run applied as argocd-controller; mutation-webhook changes are taken
// out unless IncludeMutationWebhook=true; then both sides get the full
// normalization, lose managedFields, and are compared.
func (c *compareConfig) serverSideDiff(config, live *unstructured.Unstructured, dryRun DryRunner) (*diffResult, error) {
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if dryRun == nil {
		return nil, errors.New("server-side diff needs a server-side apply dry-run (--server-dry-run)")
	}
	scratch := &normResult{}
	config = remarshal(config)
	c.gitopsNormalizeShallow(config)
	live = remarshal(live)
	c.gitopsNormalizeShallow(live)
	predicted, err := dryRun(ctx, config, SSAManager)
	if err != nil {
		return nil, fmt.Errorf("server-side apply dry-run of %s/%s: %w", config.GetKind(), config.GetName(), err)
	}
	if !c.includeMutationWebhook {
		if predicted, err = c.removeWebhookMutation(predicted, live); err != nil {
			return nil, fmt.Errorf("error removing non config mutations: %w", err)
		}
	}
	predicted = remarshal(predicted)
	c.gitopsNormalize(predicted, scratch)
	// Only managedFields go: last-applied-configuration stays on both
	// sides (gitops-engine removes it in structuredMergeDiff alone). The
	// dry-run prunes it when argocd-controller's Apply entry owns it (a
	// kubectl apply --server-side as argocd-controller migrated the
	// client-side sync's Update entry into it), and Argo CD is OutOfSync
	// with nothing its diff view shows (differential seed 52136).
	unstructured.RemoveNestedField(predicted.Object, "metadata", "managedFields")
	c.gitopsNormalize(live, scratch)
	unstructured.RemoveNestedField(live.Object, "metadata", "managedFields")
	p, l := canonicalJSON(predicted.Object), canonicalJSON(live.Object)
	return &diffResult{Modified: !reflect.DeepEqual(p, l), NormalizedLive: l, PredictedLive: p, Mode: "server-side"}, nil
}

// gitopsNormalizeShallow is gitops-engine Normalize with skipFullNormalize:
// no ignore rules, no known types.
func (c *compareConfig) gitopsNormalizeShallow(un *unstructured.Unstructured) {
	unstructured.RemoveNestedField(un.Object, "metadata", "creationTimestamp")
	gvk := un.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Secret":
		normalizeSecret(un)
	case gvk.Group == "rbac.authorization.k8s.io" && (gvk.Kind == "ClusterRole" || gvk.Kind == "Role"):
		normalizeRole(un, c.settings.Compare.IgnoreAggregatedRoles)
	case gvk.Group == "" && gvk.Kind == "Endpoints":
		normalizeEndpoints(un)
	}
}

// removeWebhookMutation mirrors gitops-engine removeWebhookMutation: fields
// of the dry-run result that argocd-controller does not manage take their
// live values, so a mutating webhook's changes are not drift.
func (c *compareConfig) removeWebhookMutation(predicted, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	mfs := predicted.GetManagedFields()
	if len(mfs) == 0 {
		return nil, fmt.Errorf("predictedLive for resource %s/%s must have the managedFields", predicted.GetKind(), predicted.GetName())
	}
	if c.parser == nil {
		return nil, errors.New("no OpenAPI schema to remove webhook mutations with")
	}
	pt := c.parser.Type(predicted.GroupVersionKind())
	if pt == nil {
		return nil, fmt.Errorf("unable to resolve parseableType for GroupVersionKind: %s", predicted.GroupVersionKind())
	}
	tp, err := pt.FromUnstructured(predicted.Object)
	if err != nil {
		return nil, err
	}
	tl, err := pt.FromUnstructured(live.Object)
	if err != nil {
		return nil, err
	}
	mine := &fieldpath.Set{}
	for _, e := range mfs {
		if e.Manager != SSAManager || e.FieldsV1 == nil {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())); err != nil {
			return nil, err
		}
		mine = mine.Union(s)
	}
	if mine.Empty() {
		return nil, fmt.Errorf("no managed fields found for manager: %s", SSAManager)
	}
	all, err := tp.ToFieldSet()
	if err != nil {
		return nil, err
	}
	others := all.Difference(mine)
	cmp, err := tl.Compare(tp)
	if err != nil {
		return nil, err
	}
	if cmp.Removed != nil && !cmp.Removed.Empty() {
		cmp.Removed = cmp.Removed.Difference(others)
	}
	others = withoutCompositeKeyFields(others)
	tp = tp.RemoveItems(others)
	merged, err := tl.Merge(tp)
	if err != nil {
		return nil, fmt.Errorf("error applying predicted live to live state: %w", err)
	}
	merged = merged.RemoveItems(cmp.Removed)
	m, ok := merged.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, errors.New("predicted live is not a map")
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// withoutCompositeKeyFields keeps the fields that name items of lists keyed
// by several fields (gitops-engine filterOutCompositeKeyFields).
func withoutCompositeKeyFields(s *fieldpath.Set) *fieldpath.Set {
	out := fieldpath.NewSet()
	s.Iterate(func(p fieldpath.Path) {
		if !isCompositeKeyField(p) {
			out.Insert(p)
		}
	})
	return out
}

func isCompositeKeyField(p fieldpath.Path) bool {
	if len(p) == 0 || p[len(p)-1].FieldName == nil {
		return false
	}
	name := *p[len(p)-1].FieldName
	for i := len(p) - 2; i >= 0; i-- {
		k := p[i].Key
		if k == nil || len(*k) <= 1 {
			continue
		}
		for _, f := range *k {
			if f.Name == name {
				return true
			}
		}
	}
	return false
}

func canonicalJSON(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

// lastAppliedOnlyNote says why the object is OutOfSync when the only
// difference of Argo CD's states is last-applied-configuration, which its
// diff view (and this tool's field list) leaves out: nil otherwise.
func lastAppliedOnlyNote(dr *diffResult, seen []string) *model.Note {
	la := "/metadata/annotations/" + jsonpointer.Escape(LastAppliedAnnotation)
	if dr == nil || !dr.Modified || dr.Mode != "server-side" && !strings.HasPrefix(dr.Mode, "server-side ") ||
		len(argoDiffPaths(seen)) > 0 || !slices.Contains(seen, la) {
		return nil
	}
	return &model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "outofsync-on-last-applied",
		Message: "Argo CD is OutOfSync on " + LastAppliedAnnotation + " alone, which its diff view does not show: argocd-controller's Apply entry owns the annotation (a kubectl apply --server-side as argocd-controller took it over from the client-side sync), so the server-side diff's dry-run of Git's manifest prunes it (gitops-engine serverSideDiff compares it as any other field)"}
}
