package flux

import (
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// ignoredBelow returns the first ignore rule (and its path) under d.Path
// when the live and desired values at d.Path are equal once every ignored
// path below d.Path is removed from both. helm-controller's drift
// detection removes the ignored pointers from the dry-run result and from
// the live object before comparing them (fluxcd/pkg ssa
// jsondiff/unstructured.go Unstructured: GenerateRemovePatch applied to
// both, then a JSON diff), so a drift named at an atomic parent (a
// Service's selector, named whole by managedFields) whose only difference
// is an ignored key is nothing to it (make differential ENGINE=flux-helm
// seed 20063, class H6). Pointers are followed positionally, as the
// JSON patch does.
func (j *judgment) ignoredBelow(d *model.FieldDrift) (*ignoreRule, string) {
	if j.live == nil || j.desired == nil {
		return nil, ""
	}
	want, wok := j.lookupKeyed(j.desired.Object, d.Path)
	got, gok := jsonpointer.Get(j.live.Object, d.Path)
	if !wok || !gok {
		return nil, ""
	}
	base, err := jsonpointer.Parse(d.Path)
	if err != nil {
		return nil, ""
	}
	want, got = runtime.DeepCopyJSONValue(want), runtime.DeepCopyJSONValue(got)
	var first *ignoreRule
	var firstPath string
	for _, r := range j.matched {
		for pi, p := range r.paths {
			if _, bad := r.pathErrs[pi]; bad || p == d.Path || !covers(d.Path, p) {
				continue
			}
			tokens, err := jsonpointer.Parse(p)
			if err != nil {
				continue
			}
			want, got = removePointer(want, tokens[len(base):]), removePointer(got, tokens[len(base):])
			if first == nil {
				first, firstPath = r, p
			}
		}
	}
	if first == nil || !apiequality.Semantic.DeepEqual(want, got) {
		return nil, ""
	}
	return first, firstPath
}

// removePointer removes the value at tokens (relative to doc) from doc, in
// place, and returns doc; a path that names nothing changes nothing (a JSON
// patch remove of it would fail, and jsondiff's removal of an ignored path
// absent from one side leaves that side as it is).
func removePointer(doc any, tokens []string) any {
	if len(tokens) == 0 {
		return nil
	}
	parent, n := jsonpointer.Walk(doc, tokens[:len(tokens)-1])
	if n != len(tokens)-1 {
		return doc
	}
	last := tokens[len(tokens)-1]
	switch c := parent.(type) {
	case map[string]any:
		delete(c, last)
	case []any:
		if k, ok := jsonpointer.Index(last, len(c)); ok {
			// A list inside a map: write the shortened list back.
			short := append(c[:k:k], c[k+1:]...)
			if len(tokens) == 1 {
				return short
			}
			gp, _ := jsonpointer.Walk(doc, tokens[:len(tokens)-2])
			switch g := gp.(type) {
			case map[string]any:
				g[tokens[len(tokens)-2]] = short
			case []any:
				if gi, ok := jsonpointer.Index(tokens[len(tokens)-2], len(g)); ok {
					g[gi] = short
				}
			}
		}
	}
	return doc
}

// secretCorrectionFails turns the reverted verdicts of a Secret into
// reported when helm-controller would correct one of its data keys: its
// drift correction then fails and changes nothing on the object.
// helm-controller v1.6.0 logs the drift of a Secret after masking its
// patch with jsondiff.MaskSecretPatchData (internal/reconcile/
// atomic_release.go, ReleaseStatusDrifted), which rewrites the values of
// the /data operations in place, in the DiffSet that CorrectClusterDrift
// then applies (internal/action/diff.go ApplyDiff: one JSON patch per
// object); "***" is no base64, so the API server rejects the whole patch
// (DriftCorrectionFailed event) and every field of it stays (make
// differential ENGINE=flux-helm seeds 60287, 60311, 60389, class H7).
func (j *judgment) secretCorrectionFails(rep *model.Report) {
	if j.live == nil || j.live.GetKind() != "Secret" || j.live.GroupVersionKind().Group != "" ||
		j.owner.DriftDetection != string(helmv2.DriftDetectionEnabled) {
		return
	}
	data := false
	for _, d := range rep.Drifts {
		if (d.Path == "/data" || strings.HasPrefix(d.Path, "/data/")) && flux(d.Verdicts) == model.Reverted {
			data = true
		}
	}
	if !data {
		return
	}
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		if flux(d.Verdicts) != model.Reverted {
			continue
		}
		d.Verdicts = setVerdict(d.Verdicts, model.Verdict{Engine: Engine, Kind: model.Reported,
			Reason: "in the release manifest: helm-controller detects the drift (Drifted condition, DriftDetected event) but its correction of this Secret fails: helm-controller masks the Secret's data in the patch it then applies (jsondiff.MaskSecretPatchData in internal/reconcile/atomic_release.go), the API server rejects \"***\" as base64 and nothing in the patch changes (DriftCorrectionFailed event)"})
	}
}

// flux is Flux's verdict kind in vs, or "".
func flux(vs []model.Verdict) model.VerdictKind {
	for _, v := range vs {
		if v.Engine == Engine {
			return v.Kind
		}
	}
	return ""
}
