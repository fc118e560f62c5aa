package argocd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/fieldpath"
	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/merge"
	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/typed"
)

// structuredMergeDiff mirrors gitops-engine pkg/diff/diff.go
// StructuredMergeDiff, the diff of Applications that sync with
// ServerSideApply=true: the desired object is server-side applied (in
// memory, structured-merge-diff's Updater, force) as argocd-controller onto
// live with its managedFields, and the result is compared with live. Fields
// that argocd-controller applied before and no longer declares are removed;
// fields of other managers stay.
func structuredMergeDiff(config, live *unstructured.Unstructured, pt *typed.ParseableType) (*diffResult, error) {
	if config == nil || live == nil {
		return createOrDeleteDiff(config, live)
	}
	tvLive, err := pt.FromUnstructured(live.Object)
	if err != nil {
		return nil, fmt.Errorf("error building typed value from live resource: %w", err)
	}
	tvConfig, err := pt.FromUnstructured(config.Object)
	if err != nil {
		return nil, fmt.Errorf("error building typed value from config resource: %w", err)
	}
	managed, err := decodeManagedFields(live.GetManagedFields())
	if err != nil {
		return nil, fmt.Errorf("error decoding managed fields: %w", err)
	}
	key, err := managerIdentifier(metav1.ManagedFieldsEntry{Manager: SSAManager, Operation: metav1.ManagedFieldsOperationApply})
	if err != nil {
		return nil, err
	}
	u := (&merge.UpdaterBuilder{Converter: sameVersionConverter{}}).BuildUpdater()
	merged, _, err := u.Apply(tvLive, tvConfig, fieldpath.APIVersion(config.GetAPIVersion()), managed, key, true)
	if err != nil {
		return nil, fmt.Errorf("error while running updater.Apply: %w", err)
	}
	if merged == nil {
		// gitops-engine: no change, live as it is on both sides.
		l := canonicalJSON(live.Object)
		return &diffResult{Modified: false, NormalizedLive: l, PredictedLive: l, Mode: "structured-merge"}, nil
	}
	pred, err := normalizeTypedValue(merged)
	if err != nil {
		return nil, fmt.Errorf("error applying default values in predicted live: %w", err)
	}
	liveV, err := normalizeTypedValue(tvLive)
	if err != nil {
		return nil, fmt.Errorf("error applying default values in live: %w", err)
	}
	return &diffResult{Modified: !reflect.DeepEqual(pred, liveV), NormalizedLive: liveV, PredictedLive: pred, Mode: "structured-merge"}, nil
}

// normalizeTypedValue mirrors gitops-engine's: the last-applied annotation
// is dropped and, for a built-in kind, the scheme's defaults are patched
// in (so a field the merge took out and Kubernetes defaults back, such as
// a claim template's volumeMode, is not a difference, while one only the
// API server's registry sets, such as its apiVersion and kind, is).
func normalizeTypedValue(tv *typed.TypedValue) (any, error) {
	m, ok := tv.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("error converting result typedValue: expected map got %T", tv.AsValue().Unstructured())
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "annotations", LastAppliedAnnotation)
	data, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("error while marshaling merged unstructured: %w", err)
	}
	if data, err = defaultsFor(data, u); err != nil {
		return nil, fmt.Errorf("error applying defaults: %w", err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// sameVersionConverter: desired and live share one API version here, so
// conversion is the identity (gitops-engine converts through the scheme).
type sameVersionConverter struct{}

// Convert returns v unchanged.
func (sameVersionConverter) Convert(v *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return v, nil
}

// IsMissingVersionError: no version is ever missing.
func (sameVersionConverter) IsMissingVersionError(error) bool { return false }

// decodeManagedFields mirrors the API server's (and gitops-engine's
// borrowed) DecodeManagedFields: one versioned field set per manager
// identifier.
func decodeManagedFields(entries []metav1.ManagedFieldsEntry) (fieldpath.ManagedFields, error) {
	out := fieldpath.ManagedFields{}
	for _, e := range entries {
		key, err := managerIdentifier(e)
		if err != nil {
			return nil, err
		}
		set := &fieldpath.Set{}
		if e.FieldsV1 != nil {
			if err := set.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())); err != nil {
				return nil, fmt.Errorf("manager %s: %w", e.Manager, err)
			}
		}
		out[key] = fieldpath.NewVersionedSet(set, fieldpath.APIVersion(e.APIVersion), e.Operation == metav1.ManagedFieldsOperationApply)
	}
	return out, nil
}

// managerIdentifier mirrors BuildManagerIdentifier: the entry without
// fields, type and time (and without apiVersion for appliers), as JSON.
func managerIdentifier(e metav1.ManagedFieldsEntry) (string, error) {
	c := e
	c.FieldsType = ""
	c.FieldsV1 = nil
	c.Time = nil
	if e.Operation == metav1.ManagedFieldsOperationApply {
		c.APIVersion = ""
	}
	b, err := json.Marshal(&c)
	if err != nil {
		return "", fmt.Errorf("error marshalling manager identifier: %w", err)
	}
	return string(b), nil
}
