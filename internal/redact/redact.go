// Package redact is the one place that knows where a Secret's values can
// show and how they are hidden. Every masker of the project is here:
//
//   - structural masking, where the shape of the data is known: a Secret's
//     data and stringData, the kubectl.kubernetes.io/last-applied-configuration
//     annotation (and any other annotation holding a serialized object with
//     data or stringData), drift values at those paths, and pairs of objects
//     being diffed (kubectl diff's "***" / "*** (before)" / "*** (after)");
//   - gojq error texts about a Secret, which quote the value they failed on
//     (`cannot iterate over: string ("...")`);
//   - a last line of defence, Scrubber: it remembers the values of every
//     Secret a command read and replaces them in any string or stream that
//     reaches the user (notes, reasons, errors, stdout, stderr).
//
// It imports only the model, so every package that builds or prints
// reports can use it.
package redact

import (
	"encoding/json"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Masks, as kubectl diff writes them (k8s.io/kubectl/pkg/cmd/diff/diff.go
// Masker): equal values become Mask; values that differ become MaskBefore
// on the live side and MaskAfter on the other, so that a diff still shows
// which keys changed.
const (
	Mask       = "***"
	MaskBefore = "*** (before)"
	MaskAfter  = "*** (after)"
)

// LastAppliedAnnotation is where kubectl apply (and Argo CD's client-side
// apply) store the whole applied object: for a Secret, its values in
// plain text.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// valueFields are a Secret's fields that hold values.
var valueFields = [...]string{"data", "stringData"}

// IsSecret says whether group/kind is the core Secret.
func IsSecret(group, kind string) bool { return group == "" && kind == "Secret" }

// IsSecretID says whether a resource is a core Secret.
func IsSecretID(id model.ResourceID) bool { return IsSecret(id.Group, id.Kind) }

// IsSecretObject says whether an object (as unstructured content) is a
// core Secret: apiVersion v1 (or unset, as in a bare manifest fragment)
// and kind Secret.
func IsSecretObject(obj map[string]any) bool {
	if obj == nil {
		return false
	}
	kind, _ := obj["kind"].(string)
	av, _ := obj["apiVersion"].(string)
	return kind == "Secret" && (av == "v1" || av == "")
}

// ValuePath says whether a JSON pointer into a Secret can hold a secret
// value: /data, /stringData and everything below them, every annotation
// (last-applied carries the whole Secret, and other tools store copies in
// annotations too), and the containers of those (a whole map added or
// removed at once is a value too).
func ValuePath(pointer string) bool {
	for _, p := range []string{"/data", "/stringData", "/metadata/annotations"} {
		if pointer == p || strings.HasPrefix(pointer, p+"/") {
			return true
		}
	}
	return pointer == "" || pointer == "/" || pointer == "/metadata"
}

// Value masks one value at a secret path: a map keeps its keys (so the
// reader sees which keys exist) with every value masked; anything else
// becomes Mask. nil stays nil (absent).
func Value(v any) any {
	switch t := v.(type) {
	case nil:
		return nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k := range t {
			out[k] = Mask
		}
		return out
	}
	return Mask
}

// Drifts masks the desired and live values of a Secret's drifts at secret
// paths (see ValuePath). It does nothing for other kinds.
func Drifts(id model.ResourceID, drifts []model.FieldDrift) {
	if !IsSecretID(id) {
		return
	}
	for i := range drifts {
		d := &drifts[i]
		if ValuePath(d.Path) {
			d.Desired, d.Live = Value(d.Desired), Value(d.Live)
		}
	}
}

// Object masks, in place, every value of a Secret: data and stringData
// values become Mask, and annotations holding a serialized object have
// that object's values masked (last-applied stays valid JSON, so a reader
// still sees its shape). Other kinds are left alone.
func Object(obj map[string]any) {
	if !IsSecretObject(obj) {
		return
	}
	maskValues(obj, nil)
	forAnnotations(obj, nil, func(a, _ map[string]any) { maskValues(a, nil) })
}

// Pair masks a Secret and the object it is diffed with, the way kubectl
// diff does: equal values become Mask on both sides; differing ones
// MaskBefore (from) and MaskAfter (to). Annotations holding serialized
// objects get the same treatment inside. Either may be nil. Nothing is
// done unless one of them is a Secret.
func Pair(from, to map[string]any) {
	if !IsSecretObject(from) && !IsSecretObject(to) {
		return
	}
	maskValues(from, to)
	forAnnotations(from, to, maskValues)
}

// maskValues masks data and stringData of a, comparing with b (nil: no
// comparison, every value is Mask).
func maskValues(a, b map[string]any) {
	for _, field := range valueFields {
		var am, bm map[string]any
		if a != nil {
			am, _ = a[field].(map[string]any)
		}
		if b != nil {
			bm, _ = b[field].(map[string]any)
		}
		if a != nil {
			if _, ok := a[field]; ok && am == nil && a[field] != nil {
				a[field] = Mask // not a map: mask it whole
			}
		}
		if b != nil {
			if _, ok := b[field]; ok && bm == nil && b[field] != nil {
				b[field] = Mask
			}
		}
		for k, av := range am {
			bv, inB := bm[k]
			switch {
			case bm == nil || !inB:
				am[k] = Mask
			case equalJSON(av, bv):
				am[k], bm[k] = Mask, Mask
			default:
				am[k], bm[k] = MaskBefore, MaskAfter
			}
		}
		for k, bv := range bm {
			if _, inA := am[k]; !inA || !isMask(bv) {
				bm[k] = Mask
			}
		}
	}
}

func isMask(v any) bool {
	s, ok := v.(string)
	return ok && (s == Mask || s == MaskBefore || s == MaskAfter)
}

func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// forAnnotations calls fn on the decoded objects of annotations of a and
// b that hold a serialized JSON object (last-applied-configuration and
// its likes) and writes them back re-encoded. An annotation that is not
// JSON is left for the Scrubber: its value is not structured.
func forAnnotations(a, b map[string]any, fn func(a, b map[string]any)) {
	aa, ba := annotations(a), annotations(b)
	keys := map[string]bool{}
	for k := range aa {
		keys[k] = true
	}
	for k := range ba {
		keys[k] = true
	}
	for k := range keys {
		ao, aok := decodedObject(aa[k])
		bo, bok := decodedObject(ba[k])
		if !aok && !bok {
			continue
		}
		fn(ao, bo)
		if aok {
			aa[k] = encode(ao)
		}
		if bok {
			ba[k] = encode(bo)
		}
	}
}

func annotations(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		return nil
	}
	a, _ := md["annotations"].(map[string]any)
	return a
}

func decodedObject(v any) (map[string]any, bool) {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(strings.TrimSpace(s), "{") {
		return nil, false
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, false
	}
	_, hasData := m["data"]
	_, hasStringData := m["stringData"]
	return m, hasData || hasStringData
}

func encode(m map[string]any) string {
	b, err := json.Marshal(m)
	if err != nil {
		return Mask
	}
	return string(b) + "\n"
}

// Error wraps an error whose text was redacted, keeping the original for
// errors.Is/As.
type Error struct {
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the original error.
func (e *Error) Unwrap() error { return e.Err }
