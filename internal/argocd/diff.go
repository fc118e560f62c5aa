package argocd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smpatch"
	"github.com/kubectl-drift/kubectl-drift/internal/diff"
)

// diffResult mirrors gitops-engine pkg/diff DiffResult.
type diffResult struct {
	Modified       bool
	NormalizedLive any
	PredictedLive  any
	// Mode says which diff ran: "three-way", "two-way", "create", "delete".
	Mode string
	// Fallback explains why a 3-way diff fell back to 2-way.
	Fallback string
}

// stateDiff mirrors util/argo/diff/diff.go StateDiff (without cache, without
// server-side diff): pre-diff normalization, then gitops-engine's Diff.
func (c *compareConfig) stateDiff(live, target *unstructured.Unstructured, res *normResult) (*diffResult, error) {
	pre := c.preDiffNormalize(live, target)
	if c.serverSide && pre.Live != nil && pre.Target != nil {
		if c.localSSD {
			return c.localServerSideDiff(live, pre, res)
		}
		return c.serverSideDiff(pre.Target, pre.Live, c.dryRun)
	}
	// Keep the rule effects of the pre-diff step in res (normalizePair
	// already recorded them; a second run would double them).
	return c.gitopsDiff(pre.Target, pre.Live, res)
}

// gitopsDiff mirrors gitops-engine pkg/diff/diff.go Diff.
func (c *compareConfig) gitopsDiff(config, live *unstructured.Unstructured, res *normResult) (*diffResult, error) {
	scratch := &normResult{}
	if config != nil {
		config = remarshal(config)
		c.gitopsNormalize(config, scratch)
	}
	if live != nil {
		live = remarshal(live)
		c.gitopsNormalize(live, scratch)
	}
	// gitops-engine Diff: structured-merge diff when the app syncs with
	// server-side apply or the desired object asks for it by annotation.
	if c.structuredMerge || (config != nil && hasAnnotationOption(config.GetAnnotations(), AnnotationSyncOptions, "ServerSideApply=true")) {
		if config == nil || live == nil {
			return createOrDeleteDiff(config, live)
		}
		pt, _ := c.parseableType(config)
		dr, err := structuredMergeDiff(config, live, pt)
		if err != nil {
			return nil, fmt.Errorf("error calculating structured merge diff: %w", err)
		}
		return dr, nil
	}
	if config == nil || live == nil {
		return createOrDeleteDiff(config, live)
	}
	fallback := ""
	orig, err := lastApplied(live)
	if err != nil {
		fallback = err.Error()
	} else if orig != nil {
		c.gitopsNormalize(orig, scratch)
		dr, err := threeWayDiff(orig, config, live)
		if err == nil {
			dr.Mode = "three-way"
			return dr, nil
		}
		fallback = "three-way diff failed: " + err.Error()
	} else {
		fallback = "no " + LastAppliedAnnotation + " annotation"
	}
	dr, err := threeWayDiff(config, config.DeepCopy(), live)
	if err != nil {
		return nil, err
	}
	dr.Mode, dr.Fallback = "two-way", fallback
	return dr, nil
}

// gitopsNormalize mirrors gitops-engine Normalize: creationTimestamp, Secret,
// Role, then the full (ignore + known types) normalizer.
func (c *compareConfig) gitopsNormalize(un *unstructured.Unstructured, res *normResult) {
	c.gitopsNormalizeShallow(un)
	c.diffNormalize(un, "scratch", res)
}

// remarshal mirrors gitops-engine diff.go remarshal: built-in kinds go
// through their Go types so defaults-free canonical forms compare equal
// (quantities, omitempty zero values); unknown fields keep the object as is.
func remarshal(obj *unstructured.Unstructured) *unstructured.Unstructured {
	data, err := json.Marshal(obj)
	if err != nil {
		return obj.DeepCopy()
	}
	fresh := &unstructured.Unstructured{}
	if err := fresh.UnmarshalJSON(data); err != nil {
		return obj.DeepCopy()
	}
	item, err := scheme.Scheme.New(fresh.GroupVersionKind())
	if err != nil {
		return fresh
	}
	typedObj := reflect.New(reflect.TypeOf(item).Elem()).Interface()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&typedObj); err != nil {
		return fresh
	}
	body, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typedObj)
	if err != nil {
		return fresh
	}
	return &unstructured.Unstructured{Object: diff.ProjectMap(fresh.Object, body)}
}

// normalizeSecret mirrors gitops-engine NormalizeSecret: stringData moves to
// data (base64), empty values become "".
func normalizeSecret(un *unstructured.Unstructured) {
	mergeStringData(un)
	var secret corev1.Secret
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(un.Object, &secret); err != nil {
		return
	}
	for k, v := range secret.Data {
		if len(v) == 0 {
			secret.Data[k] = []byte("")
		}
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&secret)
	if err != nil {
		return
	}
	if secret.Data != nil {
		_ = unstructured.SetNestedField(un.Object, obj["data"], "data")
	}
}

// mergeStringData writes a Secret's stringData over its data (base64)
// and drops it, as gitops-engine NormalizeSecret and the API server's
// conversion to the internal type (Convert_v1_Secret_To_core_Secret) do.
func mergeStringData(un *unstructured.Unstructured) {
	sd, found, err := unstructured.NestedMap(un.Object, "stringData")
	if !found || err != nil {
		return
	}
	data, found, _ := unstructured.NestedMap(un.Object, "data")
	if !found {
		data = map[string]any{}
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		} else {
			data[k] = v
		}
	}
	if err := unstructured.SetNestedField(un.Object, data, "data"); err == nil {
		delete(un.Object, "stringData")
	}
}

// normalizeRole mirrors gitops-engine normalizeRole.
func normalizeRole(un *unstructured.Unstructured, ignoreAggregated bool) {
	if ignoreAggregated {
		if a, ok := un.Object["aggregationRule"]; ok {
			if _, ok := a.(map[string]any); ok {
				un.Object["rules"] = nil
			}
		}
	}
	rules, ok := un.Object["rules"].([]any)
	if ok && rules != nil && len(rules) == 0 {
		un.Object["rules"] = nil
	}
}

func lastApplied(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	s, ok := live.GetAnnotations()[LastAppliedAnnotation]
	if !ok {
		return nil, nil
	}
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(s), obj); err != nil {
		return nil, fmt.Errorf("failed to unmarshal %s: %w", LastAppliedAnnotation, err)
	}
	return obj, nil
}

func createOrDeleteDiff(config, live *unstructured.Unstructured) (*diffResult, error) {
	switch {
	case live != nil && config == nil:
		return &diffResult{Modified: false, NormalizedLive: live.Object, PredictedLive: nil, Mode: "delete"}, nil
	case config != nil && live == nil:
		return &diffResult{Modified: true, NormalizedLive: nil, PredictedLive: config.Object, Mode: "create"}, nil
	}
	return nil, errors.New("both live and config are null objects")
}

// threeWayDiff mirrors gitops-engine ThreeWayDiff: a strategic (built-in
// kinds) or JSON (others) three-way merge patch applied to live; for
// built-in kinds the scheme's defaults are then patched into both the
// predicted state and live (applyPatch).
func threeWayDiff(orig, config, live *unstructured.Unstructured) (dr *diffResult, err error) {
	// strategicpatch compares merge keys with ==, which panics on a key
	// that is a map or a list (a broken input; smpatch keeps that): one
	// line instead.
	defer func() {
		if r := recover(); r != nil {
			dr, err = nil, fmt.Errorf("strategic merge patch failed: %v", r)
		}
	}()
	orig = removeNamespaceAnnotation(orig)
	config = removeNamespaceAnnotation(config)
	origB, err := json.Marshal(orig.Object)
	if err != nil {
		return nil, err
	}
	configB, err := json.Marshal(config.Object)
	if err != nil {
		return nil, err
	}
	liveB, err := json.Marshal(live.Object)
	if err != nil {
		return nil, err
	}
	var predicted []byte
	if versioned, err := scheme.Scheme.New(orig.GroupVersionKind()); err == nil {
		// live's JSON unless the StatefulSet workaround changes it (one
		// copy less of an object that may be megabytes: issue 29).
		lB := liveB
		gk := orig.GroupVersionKind().GroupKind()
		if (gk.Group == "apps" || gk.Group == "extensions") && gk.Kind == "StatefulSet" {
			if lB, err = json.Marshal(statefulSetWorkaround(orig, live).Object); err != nil {
				return nil, err
			}
		}
		meta, err := strategicpatch.NewPatchMetaFromStruct(versioned)
		if err != nil {
			return nil, err
		}
		// smpatch is strategicpatch with the same results in linear
		// time (strategicpatch rescans a list per item: issue 29).
		patch, err := smpatch.CreateThreeWayMergePatch(origB, configB, lB, meta)
		if err != nil {
			return nil, fmt.Errorf("failed to construct three way merge patch: %w", err)
		}
		predicted, err = smpatch.StrategicMergePatch(liveB, patch, meta)
		if err != nil {
			return nil, fmt.Errorf("failed to construct strategic merge patch: %w", err)
		}
		// gitops-engine applyPatch: the scheme's defaults go into the
		// predicted state and into live, each through its Go type.
		if predicted, err = defaultsFor(predicted, orig); err != nil {
			return nil, err
		}
		if liveB, err = defaultsFor(liveB, orig); err != nil {
			return nil, err
		}
	} else {
		trimmed := diff.ProjectMap(orig.Object, live.Object)
		tB, err := json.Marshal(trimmed)
		if err != nil {
			return nil, err
		}
		patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(origB, configB, tB)
		if err != nil {
			return nil, fmt.Errorf("failed to construct three way merge patch: %w", err)
		}
		predicted, err = jsonpatch.MergePatch(liveB, patch)
		if err != nil {
			return nil, fmt.Errorf("failed to construct merge patch for predicted state: %w", err)
		}
	}
	var p, l any
	if err := json.Unmarshal(predicted, &p); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(liveB, &l); err != nil {
		return nil, err
	}
	return &diffResult{Modified: !reflect.DeepEqual(p, l), NormalizedLive: l, PredictedLive: p}, nil
}

// defaultsFor runs patchDefaults with a new object of like's kind from
// client-go's scheme (gitops-engine's newVersionedObject).
func defaultsFor(data []byte, like *unstructured.Unstructured) ([]byte, error) {
	typed, err := scheme.Scheme.New(like.GroupVersionKind())
	if err != nil {
		return data, nil //nolint:nilerr // not a built-in kind: no defaults, as upstream
	}
	return patchDefaults(data, typed)
}

// removeNamespaceAnnotation mirrors gitops-engine's: orig without
// metadata.namespace and empty annotations. A copy down to metadata
// only, sharing the rest: threeWayDiff only reads it, and a deep copy of
// an object of megabytes costs hundreds (issue 29).
func removeNamespaceAnnotation(orig *unstructured.Unstructured) *unstructured.Unstructured {
	obj := maps.Clone(orig.Object)
	if md, ok := obj["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		delete(md, "namespace")
		if a, ok := md["annotations"]; ok {
			if a == nil {
				delete(md, "annotations")
			} else if m, ok := a.(map[string]any); ok && len(m) == 0 {
				delete(md, "annotations")
			}
		}
		obj["metadata"] = md
	}
	return &unstructured.Unstructured{Object: obj}
}

func statefulSetWorkaround(orig, live *unstructured.Unstructured) *unstructured.Unstructured {
	ot, ok, err := unstructured.NestedSlice(orig.Object, "spec", "volumeClaimTemplates")
	if !ok || err != nil {
		return live
	}
	lt, ok, err := unstructured.NestedSlice(live.Object, "spec", "volumeClaimTemplates")
	if !ok || err != nil {
		return live
	}
	live = live.DeepCopy()
	_ = unstructured.SetNestedField(live.Object, diff.Project(ot, lt), "spec", "volumeClaimTemplates")
	return live
}
