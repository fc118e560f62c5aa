package audit

import (
	"encoding/json"
	"sort"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// manifestIndex finds a rule's targets without scanning every manifest for
// every rule: rules name a literal kind almost always, so manifests are
// bucketed by kind and only wildcard selectors walk the whole list.
type manifestIndex struct {
	docs   []Document
	byKind map[string][]int
	// byKindName buckets by "kind/name" for rules that name one object.
	byKindName map[string][]int
	// size is each manifest's JSON size, computed on demand.
	size map[int]int
	// kinds holds every group/kind seen (for near-miss suggestions).
	groupKinds []groupKind
	names      []string
	namespaces []string
	// jsonCache holds each manifest as plain JSON types for gojq, which
	// does not accept the int64 values of unstructured content.
	jsonCache map[int]any
	// targetCache holds targets by selector: a matcher is a function of its
	// selector alone, and large repositories repeat selectors (hundreds of
	// rules on apps/Deployment), so each selector walks its candidates
	// once instead of once per rule (rules x manifests).
	targetCache map[model.Selector][]int
	// sampleCache holds largestTargets by selector, for the same reason.
	sampleCache map[model.Selector][]int
}

type groupKind struct{ Group, Kind string }

func newManifestIndex(docs []Document) *manifestIndex {
	ix := &manifestIndex{byKind: map[string][]int{}, byKindName: map[string][]int{}, jsonCache: map[int]any{}, size: map[int]int{},
		targetCache: map[model.Selector][]int{}, sampleCache: map[model.Selector][]int{}}
	seenGK := map[groupKind]bool{}
	seenName := map[string]bool{}
	seenNS := map[string]bool{}
	for _, d := range docs {
		if d.Object == nil || d.Object.GetKind() == "" {
			continue
		}
		i := len(ix.docs)
		ix.docs = append(ix.docs, d)
		gvk := d.Object.GroupVersionKind()
		ix.byKind[gvk.Kind] = append(ix.byKind[gvk.Kind], i)
		kn := gvk.Kind + "/" + d.Object.GetName()
		ix.byKindName[kn] = append(ix.byKindName[kn], i)
		gk := groupKind{gvk.Group, gvk.Kind}
		if !seenGK[gk] {
			seenGK[gk] = true
			ix.groupKinds = append(ix.groupKinds, gk)
		}
		if n := d.Object.GetName(); n != "" && !seenName[n] {
			seenName[n] = true
			ix.names = append(ix.names, n)
		}
		if ns := d.Object.GetNamespace(); ns != "" && !seenNS[ns] {
			seenNS[ns] = true
			ix.namespaces = append(ix.namespaces, ns)
		}
	}
	sort.Slice(ix.groupKinds, func(i, j int) bool {
		if ix.groupKinds[i].Group != ix.groupKinds[j].Group {
			return ix.groupKinds[i].Group < ix.groupKinds[j].Group
		}
		return ix.groupKinds[i].Kind < ix.groupKinds[j].Kind
	})
	sort.Strings(ix.names)
	sort.Strings(ix.namespaces)
	return ix
}

// targets returns the indexes of the manifests m matches. The slice is
// shared between callers: do not modify it.
func (ix *manifestIndex) targets(m *matcher) []int {
	if m == nil || m.match == nil {
		return nil
	}
	if t, ok := ix.targetCache[m.sel]; ok {
		return t
	}
	t := ix.findTargets(m)
	ix.targetCache[m.sel] = t
	return t
}

func (ix *manifestIndex) findTargets(m *matcher) []int {
	var cand []int
	switch {
	case m.literalKind != "" && m.literalName != "":
		cand = ix.byKindName[m.literalKind+"/"+m.literalName]
	case m.literalKind != "":
		cand = ix.byKind[m.literalKind]
	default:
		cand = make([]int, len(ix.docs))
		for i := range cand {
			cand[i] = i
		}
	}
	var out []int
	for _, i := range cand {
		if m.match(ix.docs[i].Object) {
			out = append(out, i)
		}
	}
	return out
}

// jsonSize returns the size of manifest i as JSON.
func (ix *manifestIndex) jsonSize(i int) int {
	if n, ok := ix.size[i]; ok {
		return n
	}
	b, _ := json.Marshal(ix.docs[i].Object.Object)
	ix.size[i] = len(b)
	return len(b)
}

// plain returns manifest i as JSON-typed values.
func (ix *manifestIndex) plain(i int) any {
	if v, ok := ix.jsonCache[i]; ok {
		return v
	}
	var v any
	if b, err := json.Marshal(ix.docs[i].Object.Object); err == nil {
		_ = json.Unmarshal(b, &v)
	}
	ix.jsonCache[i] = v
	return v
}

// lookupPointer walks tokens through an unstructured value. It reports how
// many tokens resolved, so callers can name the first missing one.
func lookupPointer(v any, tokens []string) (resolved int) {
	_, resolved = jsonpointer.Walk(v, tokens)
	return resolved
}

// childKeys lists the keys at tokens (for near-miss suggestions).
func childKeys(v any, tokens []string) []string {
	v, _ = jsonpointer.Walk(v, tokens)
	if m, ok := v.(map[string]any); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return keys
	}
	return nil
}

func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// largest returns up to n of the given manifests, largest JSON first.
// largestTargets is largest(targets(m), n), once per selector.
func (ix *manifestIndex) largestTargets(m *matcher, n int) []int {
	if m == nil || m.match == nil {
		return nil
	}
	if t, ok := ix.sampleCache[m.sel]; ok && len(t) <= n {
		return t
	}
	t := ix.largest(ix.targets(m), n)
	ix.sampleCache[m.sel] = t
	return t
}

func (ix *manifestIndex) largest(idx []int, n int) []int {
	if len(idx) <= n {
		return idx
	}
	c := append([]int(nil), idx...)
	sort.SliceStable(c, func(a, b int) bool { return ix.jsonSize(c[a]) > ix.jsonSize(c[b]) })
	return c[:n]
}
