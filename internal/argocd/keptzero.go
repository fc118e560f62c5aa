package argocd

import (
	"encoding/json"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// keptZeroDrifts: the generic comparison (internal/diff removed) takes a
// false, 0 or "" that Git sets and live lacks for no drift, since a field
// whose Go type has omitempty on a plain value is dropped by the API
// server's encoding. A field of pointer type (omitempty on *bool, *int32)
// keeps its zero: the API server stores `automountServiceAccountToken:
// false` as sent. Argo CD's sync applies Git's manifest, so such a field is
// written by every sync of the OutOfSync object; where an ignoreDifferences
// rule hides it from Argo CD's diff, self-heal still writes it (Argo CD
// v3.2.11, differential seed 54144: a ServiceAccount, a jsonPointers rule
// on /automountServiceAccountToken, self-heal changed it). Which zeros the
// API server keeps is computed as it does: Git's manifest decoded into the
// kind's Go type and encoded again (k8s.io/apimachinery json serializer,
// the types of k8s.io/api); a zero that survives is one it stores. Only
// built-in kinds (a custom resource is stored as sent, pruned by its
// schema, which this does not compute) and map members (a list item's
// pointer depends on how the lists align), and only Git's manifest, not
// last-applied-configuration (inferred mode).
func keptZeroDrifts(drifts []model.FieldDrift, desired, live *unstructured.Unstructured) []model.FieldDrift {
	if desired == nil || live == nil {
		return nil
	}
	stored, ok := typedEncoding(desired)
	if !ok {
		return nil
	}
	var listed []string
	for _, d := range drifts {
		listed = append(listed, d.Path)
	}
	var out []model.FieldDrift
	for _, p := range keptZeroPointers(desired.Object, stored, "") {
		if anyCovers(listed, p) || strings.HasPrefix(p, "/status/") {
			continue
		}
		if _, inLive := jsonpointer.Get(live.Object, p); inLive {
			continue
		}
		v, _ := jsonpointer.Get(desired.Object, p)
		out = append(out, model.FieldDrift{Path: p, FieldPath: managedfields.FieldPath(desired, p),
			Change: model.Removed, Desired: v, Cause: model.CauseUnknown})
	}
	return out
}

// typedEncoding is obj decoded into its built-in Go type and encoded
// again, without defaulting; false when the kind is not built in or does
// not decode.
func typedEncoding(obj *unstructured.Unstructured) (map[string]any, bool) {
	typed, err := scheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		return nil, false
	}
	data, err := json.Marshal(obj.Object)
	if err != nil || json.Unmarshal(data, typed) != nil {
		return nil, false
	}
	if data, err = json.Marshal(typed); err != nil {
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return nil, false
	}
	return m, true
}

// keptZeroPointers are the pointers, through map members only, of the zero
// scalars of git that stored holds too, sorted.
func keptZeroPointers(git, stored map[string]any, prefix string) []string {
	var out []string
	for k, gv := range git {
		sv, ok := stored[k]
		if !ok {
			continue
		}
		p := prefix + "/" + jsonpointer.Escape(k)
		switch g := gv.(type) {
		case map[string]any:
			if s, isMap := sv.(map[string]any); isMap {
				out = append(out, keptZeroPointers(g, s, p)...)
			}
		default:
			if diff.IsZeroScalar(gv) && diff.IsZeroScalar(sv) {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}
