package argocd

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

var _ engine.InventoryJudge = (*Adapter)(nil)

// JudgeClean implements engine.InventoryJudge: a scan (watch, serve) judges
// an Argo CD object that no other manager wrote, or whose inferred drift is
// empty, when
//   - its Application's status.resources records it OutOfSync (a Git
//     commit not synced yet leaves the live object equal to the last sync:
//     Judge then follows the controller's status), or
//   - it carries a last-applied-configuration (Argo CD's last client-side
//     sync, which Judge diffs against) that the live object does not hold
//     field for field: a field deleted live is owned by nobody, so only
//     that diff finds it.
//
// The second test is the cheap pre-check of Argo CD's diff: an object
// holding every field of its last sync with the same value (keyed lists
// item by item, other lists whole) gives an empty 3-way diff, and most
// objects of a scan are such. On metadata only (a scan's precheck) it
// cannot be told: the object is then decoded and asked again.
func (a *Adapter) JudgeClean(obj *unstructured.Unstructured) bool {
	owner := a.Owner(obj)
	if owner == nil {
		return false
	}
	gvk := obj.GroupVersionKind()
	if a.recordedOutOfSync(owner.Namespace+"/"+owner.Name, resKey{gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()}) {
		return true
	}
	la, ok, _ := unstructured.NestedString(obj.Object, "metadata", "annotations", LastAppliedAnnotation)
	if !ok {
		return false
	}
	if mf, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "managedFields"); mf == nil {
		// Metadata only (a scan's precheck reads no managedFields, and
		// no spec to compare): unsure, so judge; the decoded object is
		// asked again. Parsing la here would be thrown away.
		return true
	}
	return !holdsLastApplied(obj, la)
}

// resKey names an object in an Application's status.resources.
type resKey struct{ group, kind, namespace, name string }

// outOfSyncIndex is one Application's OutOfSync resources, as its status
// at resourceVersion rv records them.
type outOfSyncIndex struct {
	rv  string
	set map[resKey]bool
}

// recordedOutOfSync says whether the Application (namespace/name) records
// the object OutOfSync. Each Application's OutOfSync resources are indexed
// once per resourceVersion: a scan asks for every object it owns, and in
// scan --watch and serve the Application changes (UpdateOwner); the index
// holds one entry per Application, whatever the number of changes.
func (a *Adapter) recordedOutOfSync(app string, k resKey) bool {
	e := a.appByKey(app)
	if e == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.outOfSync == nil {
		a.outOfSync = map[string]outOfSyncIndex{}
	}
	idx, ok := a.outOfSync[app]
	if !ok || idx.rv != e.app.Metadata.ResourceVersion {
		idx = outOfSyncIndex{rv: e.app.Metadata.ResourceVersion, set: outOfSyncSet(e.app)}
		// A copy of the key: app is built per object on the caller's
		// stack, and storing it would move it to the heap every call.
		a.outOfSync[strings.Clone(app)] = idx
	}
	return idx.set[k]
}

// outOfSyncSet is the resources app's status records OutOfSync.
func outOfSyncSet(app *Application) map[resKey]bool {
	set := map[resKey]bool{}
	for _, r := range app.Status.Resources {
		if r.Status == "OutOfSync" {
			set[resKey{r.Group, r.Kind, r.Namespace, r.Name}] = true
		}
	}
	return set
}

// holdsLastApplied says whether live holds every field of the
// last-applied-configuration la with the same value: then Argo CD's diff
// against it (gitops-engine pkg/diff ThreeWayDiff, with la as both the
// original and the target) patches nothing. Lists are where a patch could
// still differ: a strategic merge patch merges a list with a patch merge
// key item by item (live items keep their defaulted fields) but replaces
// any other list whole, and so does the JSON merge patch of kinds outside
// the built-in scheme; so only keyed lists of built-in kinds may hold more
// per item than la says. An unreadable la is never held (Judge says why).
func holdsLastApplied(live *unstructured.Unstructured, la string) bool {
	var want map[string]any
	if err := utiljson.Unmarshal([]byte(la), &want); err != nil || want == nil {
		return false
	}
	var meta strategicpatch.LookupPatchMeta
	if versioned, err := scheme.Scheme.New(live.GroupVersionKind()); err == nil {
		if m, err := strategicpatch.NewPatchMetaFromStruct(versioned); err == nil {
			meta = m
		}
	}
	return holdsMap(live.Object, want, meta)
}

func holdsMap(live, want map[string]any, meta strategicpatch.LookupPatchMeta) bool {
	for k, w := range want {
		l, ok := live[k]
		if !ok {
			if w == nil {
				continue // null is no value: nothing to put back
			}
			return false
		}
		switch w := w.(type) {
		case map[string]any:
			lm, ok := l.(map[string]any)
			if !ok {
				return false
			}
			var sub strategicpatch.LookupPatchMeta
			if meta != nil {
				sub, _, _ = meta.LookupPatchMetadataForStruct(k)
			}
			if !holdsMap(lm, w, sub) {
				return false
			}
		case []any:
			ll, ok := l.([]any)
			if !ok || len(ll) != len(w) {
				return false
			}
			var item strategicpatch.LookupPatchMeta
			keyed := false
			if meta != nil {
				if im, pm, err := meta.LookupPatchMetadataForSlice(k); err == nil && pm.GetPatchMergeKey() != "" {
					item, keyed = im, true
				}
			}
			for i := range w {
				wm, wIsMap := w[i].(map[string]any)
				lm, lIsMap := ll[i].(map[string]any)
				switch {
				case keyed && wIsMap && lIsMap:
					if !holdsMap(lm, wm, item) {
						return false
					}
				case !diff.EqualJSON(ll[i], w[i]):
					return false
				}
			}
		default:
			if !diff.EqualJSON(l, w) {
				return false
			}
		}
	}
	return true
}

// lastAppliedNote is said once per scan in inventory mode (ScanNotes), on
// every report otherwise.
func lastAppliedNote() model.Note {
	return model.Note{Engine: Engine, Level: model.NoteInfo, Reason: "argocd-last-applied",
		Message: "field verdicts compare with Argo CD's last sync (" + LastAppliedAnnotation + "), not Git: which fields a commit Argo CD has not synced yet changes is not seen, only the OutOfSync its Application records (-f/-k compares with Git)"}
}

// ScanNotes are the notes about a whole scan, said once instead of on each
// object it judged: that verdicts without Git compared with Argo CD's last
// sync.
func (a *Adapter) ScanNotes() []model.Note {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.comparedLastApplied {
		return nil
	}
	return []model.Note{lastAppliedNote()}
}
