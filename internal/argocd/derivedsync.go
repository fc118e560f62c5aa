package argocd

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smpatch"
	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/kube"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// clientSideSync is the object a client-side sync of target leaves, read
// lazily: gitops-engine's ApplyResource runs kubectl apply (k8s.io/kubectl
// pkg/cmd/apply/patcher.go: a strategic 3-way merge patch with the live
// last-applied-configuration as original, target as modified and live as
// current), and the API server applies that patch to live and runs its
// defaulting on the result (kube.Stored). Only a built-in kind's result is
// computed (a custom resource's patch is a JSON merge patch and its
// defaults are the CRD's).
type clientSideSync struct {
	live, target, orig *unstructured.Unstructured
	done               bool
	result             *unstructured.Unstructured
}

// changes says whether the sync's result holds another value than live
// at p, or none (and what it holds, for the reason); false when the
// result cannot be computed.
func (s *clientSideSync) changes(p string) (bool, string) {
	if !s.done {
		s.done = true
		s.result, _ = clientSideSyncResult(s.live, s.target, s.orig)
	}
	if s.result == nil {
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

// clientSideSyncResult computes clientSideSync's result; ok is false for a
// kind client-go's scheme does not know or a patch that fails.
func clientSideSyncResult(live, target, orig *unstructured.Unstructured) (result *unstructured.Unstructured, ok bool) {
	// smpatch panics on a merge key that is a map or a list (a broken
	// input): no result then.
	defer func() {
		if r := recover(); r != nil {
			result, ok = nil, false
		}
	}()
	versioned, err := scheme.Scheme.New(live.GroupVersionKind())
	if err != nil {
		return nil, false
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(versioned)
	if err != nil {
		return nil, false
	}
	var origB []byte
	if orig != nil {
		if origB, err = json.Marshal(orig.Object); err != nil {
			return nil, false
		}
	}
	targetB, err := json.Marshal(target.Object)
	if err != nil {
		return nil, false
	}
	liveB, err := json.Marshal(live.Object)
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
	out := &unstructured.Unstructured{}
	if err := json.Unmarshal(patched, &out.Object); err != nil {
		return nil, false
	}
	return kube.Stored(out)
}
