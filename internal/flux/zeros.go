package flux

import (
	"maps"
	"slices"
	"sort"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// addKeptZeros lists the zero values (false, 0, "") kustomize-controller's
// apply writes into fields the live object lacks. The shared comparison
// (internal/diff) leaves a zero the live object lacks out, as a built-in
// type's omitempty field the API server drops; but Flux applies the
// manifest after its typed round trip (fluxcd/pkg ssa
// normalize.Unstructured: the scheme's type and back, which drops exactly
// the omitempty zeros), so a zero still in the normalized manifest is one
// the type serializes (a pointer such as a ServiceAccount's
// automountServiceAccountToken *bool) and the API server stores and shows
// it. With --server-dry-run the dry-run result is the server's own answer.
// Measured: make differential seed 40223, kustomize-controller v1.9.6: a
// server-side apply of another manager took automountServiceAccountToken
// and its next apply left it out, so the server removed it; the
// controller's apply wrote false back and -f and --server-dry-run named
// nothing (class R6).
//
// Only maps are walked: a list item is paired by its merge keys
// elsewhere, and a zero inside one is not listed here.
func (j *judgment) addKeptZeros(rep *model.Report) {
	if j.helm || j.live == nil {
		return
	}
	src := j.merged
	if src == nil {
		if src = j.normDesired; src == nil || j.desired == nil {
			return
		}
	}
	listed := map[string]bool{}
	for _, d := range rep.Drifts {
		listed[d.Path] = true
	}
	var found []string
	zerosLeftOut(src.Object, j.live.Object, nil, &found)
	added := false
	for _, p := range found {
		if listed[p] || diff.IsServerBookkeeping(p) {
			continue
		}
		want, _ := jsonpointer.Get(src.Object, p)
		if j.merged == nil {
			// -f: Git sets it (the round trip also writes the zeros of
			// fields without omitempty, which the live object shows).
			if _, ok := jsonpointer.Get(j.desired.Object, p); !ok {
				continue
			}
		}
		rep.Drifts = append(rep.Drifts, model.FieldDrift{Path: p, FieldPath: fieldPathOf(p),
			Change: model.Removed, Desired: want, Cause: model.CauseUnknown})
		added = true
	}
	if added {
		sort.SliceStable(rep.Drifts, func(a, b int) bool { return rep.Drifts[a].Path < rep.Drifts[b].Path })
	}
}

// zerosLeftOut appends the pointers of the zero scalars in want (maps only)
// that live lacks; status is not applied.
func zerosLeftOut(want, live map[string]any, tok []string, out *[]string) {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if len(tok) == 0 && k == "status" {
			continue
		}
		t := append(slices.Clone(tok), k)
		lv, inLive := live[k]
		switch w := want[k].(type) {
		case map[string]any:
			lm, isMap := lv.(map[string]any)
			if inLive && !isMap {
				continue
			}
			zerosLeftOut(w, lm, t, out)
		default:
			if !inLive && diff.IsZeroScalar(w) {
				*out = append(*out, jsonpointer.Join(t...))
			}
		}
	}
}
