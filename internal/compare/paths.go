package compare

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/itchyny/gojq"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// Both engines remove fields by RFC 6901 JSON pointer: Argo CD's
// ignoreDifferences.jsonPointers become RFC 6902 remove operations
// (argo-cd util/argo/normalizers/diff_normalizer.go), Flux's ignore paths go
// through fluxcd/pkg ssa/jsondiff GenerateRemovePatch, where "" (IgnorePathRoot,
// ssa/jsondiff/unstructured.go) means the whole object. Argo CD's
// jqPathExpressions are run as del(EXPR); those that are plain paths are
// pointers written differently, and are compared as such.

// segment is one step of a path: a key (object member or array index), or
// any array item when Wild.
type segment struct {
	Key  string
	Wild bool
}

// pathPattern is a field path, possibly with `[]` steps.
type pathPattern []segment

// parsePointer splits an RFC 6901 pointer; "" is the whole document.
func parsePointer(p string) (pathPattern, error) {
	tokens, err := jsonpointer.Parse(p)
	if err != nil {
		return nil, err
	}
	out := make(pathPattern, len(tokens))
	for i, t := range tokens {
		out[i] = segment{Key: t}
	}
	return out, nil
}

// Pointer renders the pattern as an RFC 6901 pointer; ok is false when it
// has wildcard steps, which no pointer can express.
func (p pathPattern) Pointer() (string, bool) {
	var b strings.Builder
	for _, s := range p {
		if s.Wild {
			return "", false
		}
		b.WriteByte('/')
		b.WriteString(jsonpointer.Escape(s.Key))
	}
	return b.String(), true
}

// String renders the pattern as a pointer, with `*` for any array item.
func (p pathPattern) String() string {
	if len(p) == 0 {
		return `"" (the whole object)`
	}
	var b strings.Builder
	for _, s := range p {
		b.WriteByte('/')
		if s.Wild {
			b.WriteString("*")
			continue
		}
		b.WriteString(jsonpointer.Escape(s.Key))
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s == "0" || s[0] != '0'
}

// covers reports whether removing p removes q too (p is q or an ancestor).
func (p pathPattern) covers(q pathPattern) bool {
	if len(p) > len(q) {
		return false
	}
	for i := range p {
		switch {
		case p[i].Wild && (q[i].Wild || isIndex(q[i].Key)):
		case !p[i].Wild && !q[i].Wild && p[i].Key == q[i].Key:
		default:
			return false
		}
	}
	return true
}

// overlaps reports whether some field is removed by both p and q.
func (p pathPattern) overlaps(q pathPattern) bool {
	n := min(len(p), len(q))
	for i := 0; i < n; i++ {
		a, b := p[i], q[i]
		switch {
		case a.Wild && b.Wild:
		case a.Wild:
			if !isIndex(b.Key) {
				return false
			}
		case b.Wild:
			if !isIndex(a.Key) {
				return false
			}
		case a.Key != b.Key:
			return false
		}
	}
	return true
}

// pathSet is the set of fields a rule removes.
type pathSet []pathPattern

// uncovered returns the members of q that no member of s covers.
func (s pathSet) uncovered(q pathSet) pathSet {
	var out pathSet
	for _, b := range q {
		hit := false
		for _, a := range s {
			if a.covers(b) {
				hit = true
				break
			}
		}
		if !hit {
			out = append(out, b)
		}
	}
	return out
}

func (s pathSet) overlaps(q pathSet) bool {
	for _, a := range s {
		for _, b := range q {
			if a.overlaps(b) {
				return true
			}
		}
	}
	return false
}

func (s pathSet) strings() []string {
	out := make([]string, len(s))
	for i, p := range s {
		out[i] = p.String()
	}
	sort.Strings(out)
	return out
}

// relatePaths relates the sets of fields removed by a and b.
func relatePaths(a, b pathSet) Relation {
	onlyB := a.uncovered(b) // in b, not removed by a
	onlyA := b.uncovered(a)
	switch {
	case len(onlyA) == 0 && len(onlyB) == 0:
		return RelEqual
	case len(onlyA) == 0:
		return RelSubset
	case len(onlyB) == 0:
		return RelSuperset
	case a.overlaps(b):
		return RelOverlap
	}
	return RelDisjoint
}

// JQKind classifies a jq path expression (Argo CD's jqPathExpressions).
type JQKind int

// The kinds of jq expressions, from the easiest to say as a JSON pointer.
const (
	JQPath    JQKind = iota // a plain path: same as a JSON pointer
	JQIterate               // a path with [] steps: every array item
	JQSelect                // selects items by value (select, test, ...)
	JQOther                 // anything else: functions, pipes, slices
	JQInvalid               // does not parse
)

// jqAnalysis is what a jq expression removes, as far as it is a path.
type jqAnalysis struct {
	Kind    JQKind
	Pattern pathPattern // for JQPath and JQIterate
	Reason  string      // why it is invalid
}

// JQKindOf classifies a jq expression (see analyzeJQ).
func JQKindOf(expr string) JQKind { return analyzeJQ(expr).Kind }

// JQPointer returns the JSON pointer a plain jq path expression (JQPath)
// removes.
func JQPointer(expr string) (string, bool) {
	j := analyzeJQ(expr)
	if j.Kind != JQPath {
		return "", false
	}
	return j.Pattern.Pointer()
}

// analyzeJQ decides whether a jq expression is a pure path such as
// `.spec.replicas` or `.metadata.labels["x"]` (then it is a JSON pointer in
// jq clothing), a path over every array item (`.webhooks[]?.caBundle`), or a
// real program such as `.spec.containers[] | select(.name == "x") | .image`.
// It reads gojq's AST, the parser Argo CD itself uses.
func analyzeJQ(expr string) jqAnalysis {
	q, err := gojq.Parse(expr)
	if err != nil {
		return jqAnalysis{Kind: JQInvalid, Reason: fmt.Sprintf("invalid jq expression: %v", err)}
	}
	if pat, wild, ok := queryPath(q); ok {
		if wild {
			return jqAnalysis{Kind: JQIterate, Pattern: pat}
		}
		return jqAnalysis{Kind: JQPath, Pattern: pat}
	}
	if usesSelect(q.String()) {
		return jqAnalysis{Kind: JQSelect}
	}
	return jqAnalysis{Kind: JQOther}
}

func usesSelect(s string) bool {
	for _, f := range []string{"select(", "test(", "match(", "index(", "contains(", "startswith(", "endswith(", "any(", "all("} {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}

// queryPath turns a query made of one index term and suffixes into a path.
func queryPath(q *gojq.Query) (pathPattern, bool, bool) {
	if q == nil || q.Term == nil || q.Left != nil || q.Right != nil || len(q.FuncDefs) > 0 || len(q.Patterns) > 0 || q.Meta != nil || len(q.Imports) > 0 {
		return nil, false, false
	}
	t := q.Term
	var out pathPattern
	wild := false
	switch t.Type {
	case gojq.TermTypeIdentity:
	case gojq.TermTypeIndex:
		seg, ok := indexSegment(t.Index)
		if !ok {
			return nil, false, false
		}
		out = append(out, seg)
	default:
		return nil, false, false
	}
	for _, s := range t.SuffixList {
		switch {
		case s.Index != nil:
			seg, ok := indexSegment(s.Index)
			if !ok {
				return nil, false, false
			}
			out = append(out, seg)
		case s.Iter:
			out = append(out, segment{Wild: true})
			wild = true
		case s.Optional:
			// `?` only silences errors; the path is the same.
		default:
			return nil, false, false
		}
	}
	return out, wild, true
}

func indexSegment(ix *gojq.Index) (segment, bool) {
	if ix == nil || ix.IsSlice || ix.End != nil {
		return segment{}, false
	}
	if ix.Name != "" {
		return segment{Key: ix.Name}, true
	}
	if ix.Str != nil {
		if ix.Str.Queries != nil {
			return segment{}, false
		}
		return segment{Key: ix.Str.Str}, true
	}
	if ix.Start != nil {
		st := ix.Start
		if st.Term == nil || st.Left != nil || st.Right != nil || len(st.Term.SuffixList) > 0 {
			return segment{}, false
		}
		switch st.Term.Type {
		case gojq.TermTypeNumber:
			n, err := strconv.Atoi(st.Term.Number)
			if err != nil || n < 0 {
				return segment{}, false
			}
			return segment{Key: strconv.Itoa(n)}, true
		case gojq.TermTypeString:
			if st.Term.Str == nil || st.Term.Str.Queries != nil {
				return segment{}, false
			}
			return segment{Key: st.Term.Str.Str}, true
		}
	}
	return segment{}, false
}
