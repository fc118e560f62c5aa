package flux

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// Field managers of the Flux controllers.
const (
	// KustomizeManager is kustomize-controller's SSA field owner
	// (kustomize-controller main.go controllerName; ssa.Owner{Field: ...}).
	KustomizeManager = "kustomize-controller"
	// HelmManager is helm-controller's field owner for drift detection and
	// correction (helm-controller internal/action/diff.go fieldOwner).
	HelmManager = "helm-controller"
	// helmSDKManager is the field manager of the Helm SDK's own writes
	// (helm.sh/helm kube client default), which install chart manifests
	// when helm-controller runs a Helm action without its own manager.
	helmSDKManager = "helm"
)

// cleanupManager is one entry of kustomize-controller's managedFields
// cleanup list: before applying, entries matching it are merged into
// kustomize-controller's own Apply entry (fluxcd/pkg ssa patch.go
// PatchReplaceFieldsManagers), so kustomize-controller's next apply takes
// their fields back: values in the manifest are reset, the rest is removed.
type cleanupManager struct {
	name      string
	operation metav1.ManagedFieldsOperationType
	why       string
}

// kustomizeCleanup mirrors kustomize-controller
// internal/controller/kustomization_controller.go apply() (ApplyCleanupOptions
// FieldManagers). Names match by prefix (ssa patch.go matchFieldManager with
// ExactMatch false), so "kubectl" also catches kubectl-edit, kubectl-patch,
// kubectl-client-side-apply, kubectl-label... Entries of a subresource
// (kubectl scale writes /scale) are not cleaned up: cleanedUpBy. Read-only.
var kustomizeCleanup = []cleanupManager{
	{"kubectl", metav1.ManagedFieldsOperationApply, "kubectl apply --server-side"},
	{"kubectl", metav1.ManagedFieldsOperationUpdate, "kubectl edit/patch/apply/set/label, not kubectl scale: it writes through the scale subresource, which the cleanup skips"},
	{"before-first-apply", metav1.ManagedFieldsOperationUpdate, "fields from before the first server-side apply"},
	{KustomizeManager, metav1.ManagedFieldsOperationUpdate, "kustomize-controller before it used server-side apply"},
}

// cleanedUpBy returns the cleanup rule that catches a manager entry, or nil.
// Subresource entries are never cleaned up (ssa patch.go matchFieldManager).
func cleanedUpBy(manager, operation, subresource string) *cleanupManager {
	if subresource != "" {
		return nil
	}
	for i := range kustomizeCleanup {
		c := &kustomizeCleanup[i]
		if string(c.operation) == operation && strings.HasPrefix(manager, c.name) {
			return c
		}
	}
	return nil
}

// managedEntry is one pre-parsed managedFields entry.
type managedEntry struct {
	manager     string
	operation   string
	subresource string
	fields      map[string]any
}

// parseManagedFields reads the managedFields of obj, skipping entries
// whose fieldsV1 cannot be parsed (as ssa manager_apply.go
// parseManagedFieldsApply does), and the number of entries
// obj.GetManagedFields() gives (0 when it cannot read them).
//
// Well-formed entries are read from the object's own maps (the fieldsV1
// tree is shared, read only); GetManagedFields' conversion to typed
// entries and a JSON decode of each fieldsV1 again were a tenth of a
// drifted object's cost in scan (issue 35). Anything else takes that
// path, so the answer is the same.
func parseManagedFields(obj *unstructured.Unstructured) ([]managedEntry, int) {
	if obj == nil {
		return nil, 0
	}
	if out, n, ok := managedEntriesDirect(obj); ok {
		return out, n
	}
	return managedEntriesConverted(obj)
}

// managedEntriesConverted is parseManagedFields through GetManagedFields.
func managedEntriesConverted(obj *unstructured.Unstructured) ([]managedEntry, int) {
	mfs := obj.GetManagedFields()
	var out []managedEntry
	for _, mf := range mfs {
		e := managedEntry{manager: mf.Manager, operation: string(mf.Operation), subresource: mf.Subresource}
		if raw := mf.FieldsV1.GetRawBytes(); len(raw) > 0 {
			if err := json.Unmarshal(raw, &e.fields); err != nil {
				continue
			}
		}
		out = append(out, e)
	}
	return out, len(mfs)
}

// managedEntriesDirect reads managedFields without conversion when every
// entry is plainly well formed: string manager, operation, subresource,
// apiVersion and fieldsType, an RFC 3339 time, a fieldsV1 of nested
// objects only, no other key. ok false sends the object to
// GetManagedFields.
func managedEntriesDirect(obj *unstructured.Unstructured) ([]managedEntry, int, bool) {
	md, ok := obj.Object["metadata"].(map[string]any)
	if !ok {
		return nil, 0, false
	}
	raw, found := md["managedFields"]
	if !found {
		return nil, 0, true
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, 0, false
	}
	out := make([]managedEntry, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, 0, false
		}
		var e managedEntry
		for k, v := range m {
			switch k {
			case "manager", "operation", "subresource", "apiVersion", "fieldsType", "time":
				s, isString := v.(string)
				if !isString {
					return nil, 0, false
				}
				switch k {
				case "manager":
					e.manager = s
				case "operation":
					e.operation = s
				case "subresource":
					e.subresource = s
				case "time":
					if _, err := time.Parse(time.RFC3339, s); err != nil {
						return nil, 0, false
					}
				}
			case "fieldsV1":
				f, isMap := v.(map[string]any)
				if !isMap || !onlyObjects(f) {
					return nil, 0, false
				}
				e.fields = f
			default:
				return nil, 0, false
			}
		}
		out = append(out, e)
	}
	return out, len(list), true
}

// onlyObjects: every value under m is an object, as in a FieldsV1 tree.
func onlyObjects(m map[string]any) bool {
	for _, v := range m {
		c, ok := v.(map[string]any)
		if !ok || !onlyObjects(c) {
			return false
		}
	}
	return true
}

// ownedByOtherApplyManager mirrors fluxcd/pkg ssa manager_apply.go
// isFieldOwnedByOtherApplyManager: it decides Strip (true) versus Adopt
// (false) for an ignored path. Only non-subresource Apply entries count, and
// a pointer that cannot be resolved in fieldsV1 counts as "Flux is the sole
// owner", exactly as upstream.
func ownedByOtherApplyManager(obj *unstructured.Unstructured, pointer, fluxManager string, entries []managedEntry) (bool, string) {
	var apply []managedEntry
	for _, e := range entries {
		if e.subresource == "" && e.operation == string(metav1.ManagedFieldsOperationApply) && e.fields != nil {
			apply = append(apply, e)
		}
	}
	segs, err := pointerToFieldsV1(obj, pointer, apply)
	if err != nil {
		return false, ""
	}
	for _, e := range apply {
		if e.manager == fluxManager {
			continue
		}
		if fieldsV1Contains(e.fields, segs) {
			return true, e.manager
		}
	}
	return false, ""
}

// pointerToFieldsV1 turns "/spec/replicas" into ["f:spec","f:replicas"]; a
// numeric segment is resolved to the k:{...} key whose values match the
// list item at that index (ssa manager_apply.go pointerToFieldsV1Segments).
func pointerToFieldsV1(obj *unstructured.Unstructured, pointer string, entries []managedEntry) ([]string, error) {
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("empty pointer")
	}
	var segs []string
	for i, tok := range tokens {
		idx, err := strconv.Atoi(tok)
		if err != nil {
			segs = append(segs, "f:"+tok)
			continue
		}
		key, err := listItemKey(obj, tokens[:i], idx, segs, entries)
		if err != nil {
			return nil, err
		}
		segs = append(segs, key)
	}
	return segs, nil
}

// listItemKey finds the k:{...} (or v:) key naming the list item at idx.
func listItemKey(obj *unstructured.Unstructured, objPath []string, idx int, parent []string, entries []managedEntry) (string, error) {
	if obj == nil {
		return "", fmt.Errorf("no object")
	}
	v, _ := jsonpointer.Walk(obj.Object, objPath)
	arr, ok := v.([]any)
	if !ok || idx < 0 || idx >= len(arr) {
		return "", fmt.Errorf("index %d out of range", idx)
	}
	item := arr[idx]
	for _, e := range entries {
		node := walkFieldsV1(e.fields, parent)
		for key := range node {
			switch {
			case strings.HasPrefix(key, "k:"):
				m, isMap := item.(map[string]any)
				var kv map[string]any
				if !isMap || json.Unmarshal([]byte(key[2:]), &kv) != nil {
					continue
				}
				match := true
				for k, v := range kv {
					if !apiequality.Semantic.DeepEqual(m[k], v) {
						match = false
						break
					}
				}
				if match {
					return key, nil
				}
			case strings.HasPrefix(key, "v:"):
				var v any
				if json.Unmarshal([]byte(key[2:]), &v) == nil && apiequality.Semantic.DeepEqual(v, item) {
					return key, nil
				}
			}
		}
	}
	return "", fmt.Errorf("no fieldsV1 key for item %d", idx)
}

func walkFieldsV1(fields map[string]any, segs []string) map[string]any {
	cur := fields
	for _, s := range segs {
		child, ok := cur[s].(map[string]any)
		if !ok {
			return nil
		}
		cur = child
	}
	return cur
}

func fieldsV1Contains(fields map[string]any, segs []string) bool {
	if len(segs) == 0 {
		return false
	}
	cur := fields
	for i, s := range segs {
		child, ok := cur[s]
		if !ok {
			return false
		}
		if i == len(segs)-1 {
			return true
		}
		if cur, ok = child.(map[string]any); !ok {
			return false
		}
	}
	return true
}
