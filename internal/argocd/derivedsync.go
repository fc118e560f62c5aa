package argocd

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
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
// target names, a whole list where the list has no merge key. One per
// object: syncPrunes and syncFails read the same result.
type clientSideSync struct {
	live, desired, orig *unstructured.Unstructured
	norm                *normResult // the comparison's normalization of live and desired
	respect             bool        // RespectIgnoreDifferences=true
	done                bool
	target, result      *unstructured.Unstructured
}

// newClientSideSync is the sync of desired over live under app's sync
// options, with norm the comparison's normalization of the two; nil when live's
// last-applied-configuration cannot be read (kubectl's patch cannot be
// made either). An object without one has no original: the patch
// deletes nothing.
func newClientSideSync(norm *normResult, live, desired *unstructured.Unstructured, app *Application) *clientSideSync {
	if desired == nil || app == nil {
		return nil
	}
	orig, err := lastApplied(live)
	if err != nil {
		return nil
	}
	return &clientSideSync{live: live, desired: desired, orig: orig, norm: norm, respect: app.HasSyncOption("RespectIgnoreDifferences=true")}
}

// changes says whether the sync's result holds another value than live
// at p, or none (and what it holds, for the reason); false when the
// result cannot be computed.
func (s *clientSideSync) changes(p string) (bool, string) {
	if !s.computed() {
		return false, ""
	}
	lv, lok := jsonpointer.Get(s.live.Object, p)
	rv, ok := jsonpointer.Get(s.result.Object, p)
	switch {
	case !ok && !lok:
		return false, "" // live lacks it, and so does the result (A28)
	case !ok:
		return true, removesIt
	case !jsonEqual(diff.NormalizeNumber(lv), diff.NormalizeNumber(rv)):
		return true, fmt.Sprintf("sets it to %v", rv)
	}
	return false, ""
}

// leaves: the sync's result could be computed and holds live's value at
// p, or nothing where live has nothing.
func (s *clientSideSync) leaves(p string) bool {
	changed, _ := s.changes(p)
	return !changed && s.computed()
}

// removes: the sync's result could be computed and lacks p, which live
// has.
func (s *clientSideSync) removes(p string) bool {
	changed, what := s.changes(p)
	return changed && what == removesIt
}

// removesIt is what changes says of a field the sync's result lacks.
const removesIt = "removes it"

// computed: the sync's result could be computed (read once).
func (s *clientSideSync) computed() bool {
	if !s.done {
		s.done = true
		s.target = syncTarget(s.norm, s.live, s.desired, s.respect)
		if s.target != nil {
			s.result, _ = clientSideSyncResult(s.live, s.target, s.orig)
		}
	}
	return s.result != nil
}

// syncTarget is the manifest a sync applies: Git's, or with
// RespectIgnoreDifferences=true (respect) the one argo-cd v3.2.11
// controller/sync.go normalizeTargetResources makes: the comparison's
// whole normalization of target (util/argo/diff/normalize.go Normalize:
// tracking, managedFieldsManagers, the ignore rules, known types), with
// the patch from normalized live to live applied over it, so that the
// live value of every field a rule hides goes back in. A field a rule
// removes from Git's manifest that live lacks stays out: differential
// seed 59114 (A28), a jq rule .metadata.labels.scaled on an HPA without
// labels whose Git adds scaled: the sync applies labels: {}, the object
// keeps no labels, and Argo CD stays OutOfSync on /metadata/labels.
// Seed 58790 (A27): a jsonPointer rule on a Service's sessionAffinity,
// which a person set to ClientIP; the sync keeps ClientIP, and the
// sessionAffinityConfig the server derived from it. nil when Argo CD's
// step fails (the operation errs and applies nothing). res is the
// comparison's normalizePair of live and desired, the normalization Argo
// CD runs again for the sync: it is not computed twice here.
func syncTarget(res *normResult, live, desired *unstructured.Unstructured, respect bool) *unstructured.Unstructured {
	if !respect || res == nil || res.Live == nil || res.Target == nil {
		return desired
	}
	out, ok := withLiveOf(live, res.Live, res.Target)
	if !ok {
		return nil
	}
	return out
}

// withLiveOf applies to target the patch that turns normLive into live,
// as normalizeTargetResources does (getMergePatch, applyMergePatch): a
// strategic three-way patch with live as original and modified for a
// built-in kind, so that it only sets (nothing normalized live has and
// live lacks is deleted), else a JSON merge patch, which deletes too.
func withLiveOf(live, normLive, target *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	liveB, err1 := json.Marshal(live.Object)
	normB, err2 := json.Marshal(normLive.Object)
	targetB, err3 := json.Marshal(target.Object)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, false
	}
	var out []byte
	if versioned, err := scheme.Scheme.New(target.GroupVersionKind()); err == nil {
		meta, err := strategicpatch.NewPatchMetaFromStruct(versioned)
		if err != nil {
			return nil, false
		}
		patch, err := smpatch.CreateThreeWayMergePatch(liveB, liveB, normB, meta)
		if err != nil {
			return nil, false
		}
		if out, err = smpatch.StrategicMergePatch(targetB, patch, meta); err != nil {
			return nil, false
		}
	} else {
		patch, err := jsonpatch.CreateMergePatch(normB, liveB)
		if err != nil {
			return nil, false
		}
		if out, err = jsonpatch.MergePatch(targetB, patch); err != nil {
			return nil, false
		}
	}
	return decodeObject(out)
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
	storedSecretData(out)
	return kube.Stored(out)
}

// storedSecretData writes a Secret's stringData into its data, as the API
// server stores what it is sent: its conversion to the internal type
// writes every stringData key over data, and the internal type has no
// stringData (kubernetes pkg/apis/core/v1/conversion.go
// Convert_v1_Secret_To_core_Secret). Differential seed 62233: Git's
// password is stringData, live has no data.password, and the sync added
// it.
func storedSecretData(obj *unstructured.Unstructured) {
	if obj.GroupVersionKind() == corev1.SchemeGroupVersion.WithKind("Secret") {
		mergeStringData(obj)
	}
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
