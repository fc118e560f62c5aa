package argocd

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smpatch"
	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/kube"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// clientSideSync is the object a client-side sync of target leaves, read
// lazily: gitops-engine's ApplyResource runs kubectl apply (k8s.io/kubectl
// pkg/cmd/apply/patcher.go: a 3-way patch with the live
// last-applied-configuration as original, target as modified and live as
// current; strategic for a built-in kind, a JSON merge patch otherwise),
// and the API server applies that patch to live and, for a built-in kind,
// runs its defaulting on the result (kube.Stored). Besides deleting what
// the original lists and the target lacks, the patch sets every field the
// target names, a whole list where the list has no merge key.
type clientSideSync struct {
	live, target, orig *unstructured.Unstructured
	done               bool
	result             *unstructured.Unstructured
}

// changes says whether the sync's result holds another value than live
// at p, or none (and what it holds, for the reason); false when the
// result cannot be computed.
func (s *clientSideSync) changes(p string) (bool, string) {
	if !s.computed() {
		return false, ""
	}
	lv, _ := jsonpointer.Get(s.live.Object, p)
	rv, ok := jsonpointer.Get(s.result.Object, p)
	switch {
	case !ok:
		return true, "removes it"
	case !jsonEqual(diff.NormalizeNumber(lv), diff.NormalizeNumber(rv)):
		return true, fmt.Sprintf("sets it to %v", rv)
	}
	return false, ""
}

// computed: the sync's result could be computed (read once).
func (s *clientSideSync) computed() bool {
	if !s.done {
		s.done = true
		s.result, _ = clientSideSyncResult(s.live, s.target, s.orig)
	}
	return s.result != nil
}

// clientSideSyncResult computes clientSideSync's result; ok is false when
// the patch cannot be computed, or a built-in kind's result not defaulted.
func clientSideSyncResult(live, target, orig *unstructured.Unstructured) (result *unstructured.Unstructured, ok bool) {
	// smpatch panics on a merge key that is a map or a list (a broken
	// input): no result then.
	defer func() {
		if r := recover(); r != nil {
			result, ok = nil, false
		}
	}()
	var origB []byte
	var err error
	if orig != nil {
		if origB, err = json.Marshal(orig.Object); err != nil {
			return nil, false
		}
	}
	modified, err := withLastApplied(target)
	if err != nil {
		return nil, false
	}
	targetB, err1 := json.Marshal(modified.Object)
	liveB, err2 := json.Marshal(live.Object)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	versioned, err := scheme.Scheme.New(live.GroupVersionKind())
	if err != nil {
		// A custom resource: a JSON merge patch, and its CRD's
		// defaults are not computed here.
		patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(origB, targetB, liveB)
		if err != nil {
			return nil, false
		}
		out, err := jsonpatch.MergePatch(liveB, patch)
		if err != nil {
			return nil, false
		}
		return decodeObject(out)
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(versioned)
	if err != nil {
		return nil, false
	}
	patch, err := smpatch.CreateThreeWayMergePatch(origB, targetB, liveB, meta)
	if err != nil {
		return nil, false
	}
	patched, err := smpatch.StrategicMergePatch(liveB, patch, meta)
	if err != nil {
		return nil, false
	}
	out, ok := decodeObject(patched)
	if !ok {
		return nil, false
	}
	return kube.Stored(out)
}

// withLastApplied is target as kubectl apply sends it: its
// last-applied-configuration holds target itself, without that
// annotation, annotations {} when it has none, encoded as
// unstructured.UnstructuredJSONScheme encodes (sorted keys, a newline at
// the end) (k8s.io/kubectl pkg/util/apply.go GetModifiedConfiguration,
// called by pkg/cmd/apply/patcher.go with annotate true). A sync of the
// manifest it applied last leaves the annotation as it is (differential
// seed 54139, A23: self-heal kept the annotation Argo CD's server-side
// diff shows).
func withLastApplied(target *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj := target.DeepCopy()
	annots := obj.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	delete(annots, LastAppliedAnnotation)
	obj.SetAnnotations(annots)
	enc, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding the applied object: %w", err)
	}
	annots[LastAppliedAnnotation] = string(enc) + "\n"
	obj.SetAnnotations(annots)
	return obj, nil
}

// decodeObject is the object JSON b holds.
func decodeObject(b []byte) (*unstructured.Unstructured, bool) {
	out := &unstructured.Unstructured{}
	if err := json.Unmarshal(b, &out.Object); err != nil {
		return nil, false
	}
	return out, true
}
