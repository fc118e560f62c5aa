package argocd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/features"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/fieldpath"
	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/merge"
	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/kube"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// localDryRunner is the server-side apply dry-run of Argo CD's
// server-side diff (gitops-engine pkg/diff/diff_options.go
// K8sServerSideDryRunner: kubectl apply --server-side --dry-run=server
// --force-conflicts as argocd-controller) computed in memory, for -f
// without --server-dry-run: the API server's apply is structured-merge-diff's
// Updater.Apply on the stored object and its managedFields (k8s.io/apimachinery
// pkg/util/managedfields/internal/structuredmerge.go Apply), with the
// version Argo CD v3.2 links (internal/argocd/smd), followed by the
// defaulting a decode runs (the Kubernetes scheme for built-in kinds).
//
// What it cannot see: admission webhooks (Argo CD removes their mutations
// anyway unless IncludeMutationWebhook=true, and then the real dry-run is
// needed), and a CRD's structural defaults without the cluster's schema.
// stored is the object as the API server holds it, before any of Argo
// CD's normalizations.
func (c *compareConfig) localDryRunner(stored *unstructured.Unstructured) DryRunner {
	return func(_ context.Context, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
		out, err := c.localApply(stored, obj, manager)
		if err != nil {
			return nil, err
		}
		// The dry-run is an update: the API server validates it as one
		// and rejects what the kind's update validation rejects.
		if rejections, ok := kube.UpdateRejections(stored, out); ok && len(rejections) > 0 {
			return nil, &rejectedError{fmt.Sprintf("%s %q is invalid (computed: the kind's update validation): %s", stored.GetKind(), stored.GetName(), strings.Join(rejections, "; "))}
		}
		return out, nil
	}
}

// rejectedError is the API server's answer 422 Invalid to a write,
// computed here (kube.UpdateRejections).
type rejectedError struct{ msg string }

func (e *rejectedError) Error() string { return e.msg }

// isRejected: err is the API server's rejection of the object written,
// a dry-run's (Invalid) or the computed one: what Argo CD meets as a
// ComparisonError when its server-side diff's dry-run is rejected.
func isRejected(err error) bool {
	var r *rejectedError
	return errors.As(err, &r) || apierrors.IsInvalid(err)
}

// localApply applies config onto stored as manager with force, and returns
// the object the API server would store, managedFields included.
func (c *compareConfig) localApply(stored, config *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	if c.parser == nil {
		return nil, errors.New("no OpenAPI schema to apply with")
	}
	pt := c.parser.Type(config.GroupVersionKind())
	if pt == nil {
		return nil, fmt.Errorf("the OpenAPI schema has no type for %s", config.GroupVersionKind())
	}
	live := stored.DeepCopy()
	entries := live.GetManagedFields()
	// The API server strips managedFields and the other metadata it keeps
	// out of field sets before merging (managedfields/internal/stripmeta.go).
	unstructured.RemoveNestedField(live.Object, "metadata", "managedFields")
	tvLive, err := pt.FromUnstructured(live.Object)
	if err != nil {
		return nil, fmt.Errorf("live object does not fit its schema: %w", err)
	}
	applied := config.DeepCopy()
	unstructured.RemoveNestedField(applied.Object, "metadata", "managedFields")
	tvConfig, err := pt.FromUnstructured(applied.Object)
	if err != nil {
		return nil, fmt.Errorf("desired object does not fit its schema: %w", err)
	}
	managed, err := decodeManagedFields(entries)
	if err != nil {
		return nil, fmt.Errorf("error decoding managed fields: %w", err)
	}
	key, err := managerIdentifier(metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply})
	if err != nil {
		return nil, err
	}
	u := (&merge.UpdaterBuilder{Converter: sameVersionConverter{}}).BuildUpdater()
	merged, managers, err := u.Apply(tvLive, tvConfig, fieldpath.APIVersion(config.GetAPIVersion()), managed, key, true)
	if err != nil {
		return nil, fmt.Errorf("server-side apply in memory: %w", err)
	}
	stripMeta(managers, key)
	out := live
	if merged != nil {
		m, ok := merged.AsValue().Unstructured().(map[string]any)
		if !ok {
			return nil, errors.New("applied object is not a map")
		}
		// The API server decodes the applied object into its Go type,
		// defaults it and encodes it again: a field the apply pruned that
		// the type always encodes (a container's resources: {}) is back,
		// as after remarshal (nothing changes for kinds it does not know).
		if out, err = serverRoundTrip(&unstructured.Unstructured{Object: m}); err != nil {
			return nil, err
		}
		// A custom resource gets its CRD's structural defaults back
		// where the apply pruned them (apiextensions-apiserver
		// pkg/apiserver/schema/defaulting: the server defaults every
		// object it decodes; differential seed 50886: a Backup's pod
		// template imagePullPolicy and terminationGracePeriodSeconds,
		// owned by argocd-controller's Apply entry after a migration).
		if c.crDefaults != nil {
			if d, ok := c.crDefaults(out).(map[string]any); ok {
				out = &unstructured.Unstructured{Object: d}
			}
		}
		// Then the update strategy (a Service's allocated fields the
		// change no longer needs are cleared).
		out = serverUpdate(live, out)
		// And the defaults of the API server the object lives on, whose
		// feature gates are its own release's (withServerDefaults).
		out = withServerDefaults(live, out)
	}
	mfs, err := encodeManagedFields(managers)
	if err != nil {
		return nil, err
	}
	out.SetManagedFields(mfs)
	return out, nil
}

// metaStripped are the fields the API server never records an owner for
// (k8s.io/apimachinery pkg/util/managedfields/internal/stripmeta.go).
var metaStripped = []fieldpath.Path{
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
}

// stripMeta takes those fields out of the applier's set after the apply,
// as stripMetaManager.Apply does (a plain difference: the fields under
// metadata stay).
func stripMeta(managers fieldpath.ManagedFields, manager string) {
	vs, ok := managers[manager]
	if !ok {
		return
	}
	s := vs.Set().Difference(fieldpath.NewSet(metaStripped...))
	if s.Empty() {
		delete(managers, manager)
		return
	}
	managers[manager] = fieldpath.NewVersionedSet(s, vs.APIVersion(), vs.Applied())
}

// serverRoundTrip is what the API server stores of an applied built-in
// object: decoded into its Go type, defaulted (the defaulting functions
// of the release Argo CD links, defaults.go) and encoded again, so a
// field the type always encodes (a container's resources: {}) is there
// even when the apply pruned it. A kind the scheme does not know is
// returned as it is (a CRD's structural defaults are not known here).
func serverRoundTrip(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if obj.GroupVersionKind() == apiextv1.SchemeGroupVersion.WithKind("CustomResourceDefinition") {
		return crdRoundTrip(obj), nil
	}
	typedObj, err := scheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		return obj, nil //nolint:nilerr // not a built-in kind: stored as applied
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, typedObj); err != nil {
		return nil, fmt.Errorf("the applied object does not decode into its type: %w", err)
	}
	legacyscheme.Scheme.Default(typedObj)
	stored := storedForm(typedObj, obj.GroupVersionKind().GroupVersion())
	if data, err = json.Marshal(stored); err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// withServerDefaults puts back into out (the in-memory apply's result,
// defaulted by the functions of the release Argo CD links) every map
// member live holds with the value the object's own API server fills in
// when a write leaves it out (diff.IsServerDefaultValue: kube-apiserver
// v1.37's defaults), where out lacks it and still has the map that held
// it. Argo CD's server-side diff is that server's dry-run, defaulted with
// that server's feature gates. Differential seed 60294 (Argo CD v3.2.11,
// ServerSideApply and ServerSideDiff): argocd-controller's apply owned a
// StatefulSet's rollingUpdate.maxUnavailable, which
// MaxUnavailableStatefulSet defaults on 1.37 (off on Argo CD's 1.34); Git
// leaves it out, so the apply prunes it and the server sets 1 again. -f
// said reported; Argo CD's diff does not show it. Lists are not walked
// (their items have no stable address across an apply).
func withServerDefaults(live, out *unstructured.Unstructured) *unstructured.Unstructured {
	gvk := live.GroupVersionKind()
	var res *unstructured.Unstructured
	var walk func(l map[string]any, o map[string]any, toks []string)
	walk = func(l, o map[string]any, toks []string) {
		for k, lv := range l {
			at := append(toks[:len(toks):len(toks)], k)
			ov, has := o[k]
			if lm, ok := lv.(map[string]any); ok {
				if om, ok := ov.(map[string]any); ok && has {
					walk(lm, om, at)
				}
				continue
			}
			if has || !serverOnlyDefault(gvk.Group, gvk.Kind, at) || !diff.IsServerDefaultValue(gvk.Group, gvk.Kind, at, lv, live.Object) {
				continue
			}
			if res == nil {
				res = out.DeepCopy()
			}
			if pm, ok := getMap(res.Object, at[:len(at)-1]); ok {
				pm[k] = lv
			}
		}
	}
	walk(live.Object, out.Object, nil)
	if res == nil {
		return out
	}
	return res
}

// gatedDefaults are the map members kubernetes' defaulting functions set
// only under a feature gate (pkg/apis/*/v1/defaults.go, v1.37.2), for the
// kinds an Application holds; the others the gates decide are list items
// (a container's probe, an image volume's pullPolicy), which
// withServerDefaults does not walk.
var gatedDefaults = []struct {
	group, kind string
	path        string
	gate        featuregate.Feature
}{
	{"apps", "StatefulSet", "spec/updateStrategy/rollingUpdate/maxUnavailable", features.MaxUnavailableStatefulSet},
}

// serverOnlyDefault says whether the member at toks is one the API
// server's defaulting sets where Argo CD's does not: its default depends
// on a gate that is on in the k8s.io/kubernetes release linked (the API
// server's, v1.37) and off as ArgoKubernetesVersion emulates it. Every
// other default both releases set alike, in the same context: where
// serverRoundTrip's defaulting left a member out, so does the server's
// (differential seed 64984: a Job's completions 1, which the defaulting
// writes only when parallelism is unset too, was put back after the apply
// pruned it; the server left it out and rejected the update).
func serverOnlyDefault(group, kind string, toks []string) bool {
	p := strings.Join(toks, "/")
	for _, d := range gatedDefaults {
		if d.group != group || d.kind != kind || d.path != p {
			continue
		}
		return kube.ServerGateOn(d.gate) && !utilfeature.DefaultFeatureGate.Enabled(d.gate)
	}
	return false
}

// getMap is the map at the keys path of obj.
func getMap(obj map[string]any, path []string) (map[string]any, bool) {
	m := obj
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}

// crdRoundTrip is a CustomResourceDefinition as its API server stores it
// after an apply: its spec defaulted (crdDefaults: conversion strategy
// None, ...), which client-go's scheme does not know. Differential seed
// 60659 (Argo CD v3.2.11, ServerSideDiff): a kubectl apply --server-side
// as argocd-controller of the live CRD made argocd-controller own
// spec.conversion.strategy; Git has no conversion, so the apply prunes it
// and the server sets None again, and Argo CD's diff does not show it;
// -f said reported. Only spec is taken: status is the status
// subresource's.
func crdRoundTrip(obj *unstructured.Unstructured) *unstructured.Unstructured {
	d, ok := crdDefaults(obj).(map[string]any)
	if !ok {
		return obj
	}
	spec, ok := d["spec"].(map[string]any)
	if !ok {
		return obj
	}
	out := obj.DeepCopy()
	out.Object["spec"] = spec
	return out
}

// storedForm is a defaulted object as the API server returns it: converted
// to the internal version (where it validates and stores it) and back to
// gv, through the conversion functions of k8s.io/kubernetes. Some set
// fields of their own: Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec
// (pkg/apis/apps/v1/conversion.go) writes apiVersion v1 and kind
// PersistentVolumeClaim into every volumeClaimTemplates item, so Argo CD's
// server-side dry-run has them though Git leaves them out (differential
// seeds 50005, 50018, 50124: -f said the two fields reported, Argo CD's
// diff does not show them). A kind without an internal version is
// returned as it is.
func storedForm(obj runtime.Object, gv schema.GroupVersion) runtime.Object {
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return obj
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(internal, gv)
	if err != nil {
		return obj
	}
	return out
}

// encodeManagedFields turns the Updater's managers back into the entries
// the API server stores (the inverse of decodeManagedFields).
func encodeManagedFields(managers fieldpath.ManagedFields) ([]metav1.ManagedFieldsEntry, error) {
	out := make([]metav1.ManagedFieldsEntry, 0, len(managers))
	for key, vs := range managers {
		var e metav1.ManagedFieldsEntry
		if err := json.Unmarshal([]byte(key), &e); err != nil {
			return nil, fmt.Errorf("manager identifier %q: %w", key, err)
		}
		if vs.Set().Empty() {
			continue
		}
		var buf bytes.Buffer
		if err := vs.Set().ToJSONStream(&buf); err != nil {
			return nil, err
		}
		e.APIVersion = string(vs.APIVersion())
		e.FieldsType = "FieldsV1"
		e.FieldsV1 = metav1.NewFieldsV1(buf.String())
		out = append(out, e)
	}
	return out, nil
}

// withoutDryRun decides how a server-side diff runs when no dry-run may be
// sent (-f without --server-dry-run, inferred mode): in memory
// (localSSD), unless the Application includes mutation webhooks, whose
// changes only the API server's dry-run shows; then the client-side diff
// stands in. The note says which.
func (c *compareConfig) withoutDryRun() model.Note {
	if c.includeMutationWebhook {
		c.serverSide = false
		return model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "server-side-diff",
			Message: "Argo CD compares this Application with a server-side apply dry-run that keeps mutation webhooks' changes (IncludeMutationWebhook=true); without --server-dry-run the verdicts come from the client-side diff, which may differ for defaulted or webhook-mutated fields"}
	}
	c.localSSD = true
	return model.Note{Engine: Engine, Level: model.NoteInfo, Reason: "server-side-diff",
		Message: "Argo CD compares this Application with a server-side apply dry-run as argocd-controller (server-side diff); without --server-dry-run that apply is computed in memory from the live object's managedFields, as the API server merges (webhooks' mutations are left out, as Argo CD leaves them out)"}
}

// localServerSideDiff is serverSideDiff with the in-memory apply of stored
// (the live object before normalization, as the API server holds it). When
// the apply cannot run (no schema for the kind), the client-side diff
// stands in and its Fallback says why (localSSDNote).
func (c *compareConfig) localServerSideDiff(stored *unstructured.Unstructured, pre, res *normResult) (*diffResult, error) {
	dr, err := c.serverSideDiff(pre.Target, pre.Live, c.localDryRunner(stored))
	if err == nil {
		dr.Mode = "server-side (in memory)"
		return dr, nil
	}
	if isRejected(err) {
		return nil, err // Argo CD's comparison fails the same way
	}
	dr, cerr := c.gitopsDiff(pre.Target, pre.Live, res)
	if cerr != nil {
		return nil, cerr
	}
	dr.Fallback = localSSDFailed + err.Error()
	return dr, nil
}

const localSSDFailed = "server-side diff in memory could not run, client-side diff instead: "

// localSSDNote warns when the in-memory server-side diff fell back.
func localSSDNote(dr *diffResult) *model.Note {
	if dr == nil || !strings.HasPrefix(dr.Fallback, localSSDFailed) {
		return nil
	}
	return &model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "server-side-diff",
		Message: "Argo CD compares this Application with a server-side apply dry-run; the " + dr.Fallback + " (pass --server-dry-run for Argo CD's own)"}
}

// serverSideKeeps is why a live field Git leaves out is not in a
// server-side diff: the apply dry-run prunes only what argocd-controller
// itself applied last time (structured-merge-diff merge/update.go prune).
const serverSideKeeps = "not in the desired state and not applied by argocd-controller last time: the server-side diff's apply dry-run leaves it, as a server-side apply prunes only its own manager's fields"
