package flux

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// lookupKeyed resolves pointer, whose list indices are positions in live,
// in another object of the same kind (the manifest, the dry-run result):
// items of associative lists are matched by their merge keys and set items
// by value, the way structured-merge-diff pairs them when the controller
// applies (sigs.k8s.io/structured-merge-diff merge of k:/v: path elements),
// so an item that exists only live (an injected sidecar) does not shift
// every later item. Lists without keys are matched by index. ix gives the
// list types learnt from live's managedFields (nil: the builtin table).
//
// memo, when not nil, remembers each list's items by key, so that many
// lookups in one list cost one pass over it (a judgment looks up every
// drifted field: with a linear search per lookup, 100k env vars took
// explain -f minutes, issue 29).
func lookupKeyed(ix *managedfields.Index, live *unstructured.Unstructured, other any, pointer string, memo *itemMemo) (any, bool) {
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return nil, false
	}
	if live == nil {
		v, n := jsonpointer.Walk(other, tokens)
		return v, n == len(tokens)
	}
	cur, lcur := other, any(live.Object)
	for i, tok := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			x, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = x
			if lm, ok := lcur.(map[string]any); ok {
				lcur = lm[tok]
			} else {
				lcur = nil
			}
		case []any:
			ll, _ := lcur.([]any)
			idx, ok := jsonpointer.Index(tok, max(len(c), len(ll)))
			if !ok {
				return nil, false
			}
			if idx >= len(ll) {
				// Not a live position: plain index into other.
				if idx >= len(c) {
					return nil, false
				}
				cur, lcur = c[idx], nil
				continue
			}
			litem := ll[idx]
			var lt managedfields.ListType
			listPtr := jsonpointer.Join(tokens[:i]...)
			if ix != nil {
				lt = ix.ListType(live, listPtr)
			} else {
				lt = managedfields.BuiltinListType(tokens[:i])
			}
			j := memo.match(c, litem, idx, lt)
			if j < 0 {
				return nil, false
			}
			cur, lcur = c[j], litem
		default:
			return nil, false
		}
	}
	return cur, true
}

// itemMemo indexes the lists lookupKeyed searched: per list (its first
// element's address and length, and how its items are keyed), the index
// of the first item of each key.
type itemMemo struct {
	lists map[listID]map[string]int
}

type listID struct {
	first *any
	n     int
	kind  managedfields.ListKind
	keys  string
}

// match is matchItem through the memo (nil: matchItem itself).
func (m *itemMemo) match(items []any, litem any, idx int, lt managedfields.ListType) int {
	if m == nil || len(items) == 0 || (lt.Kind != managedfields.ListMap && lt.Kind != managedfields.ListSet) {
		return matchItem(items, litem, idx, lt)
	}
	want, ok := keyOf(litem, lt)
	if !ok {
		return matchItem(items, litem, idx, lt)
	}
	id := listID{first: &items[0], n: len(items), kind: lt.Kind, keys: strings.Join(lt.Keys, "\x00") + "\x01" + fmt.Sprint(lt.Defaults)}
	byKey, ok := m.lists[id]
	if !ok {
		byKey = make(map[string]int, len(items))
		for j, it := range items {
			if k, ok := keyOf(it, lt); ok {
				if _, dup := byKey[k]; !dup {
					byKey[k] = j
				}
			}
		}
		if m.lists == nil {
			m.lists = map[listID]map[string]int{}
		}
		m.lists[id] = byKey
	}
	if j, ok := byKey[want]; ok {
		return j
	}
	return -1
}

// keyOf is what matchItem compares items by: the merge key of a map
// list's item, the JSON of a set's.
func keyOf(item any, lt managedfields.ListType) (string, bool) {
	if lt.Kind == managedfields.ListMap {
		return itemKey(item, lt)
	}
	b, err := json.Marshal(item)
	return string(b), err == nil
}

// matchItem returns the index in items of the item that is litem (found at
// live index idx) for a list of type lt, or -1.
func matchItem(items []any, litem any, idx int, lt managedfields.ListType) int {
	switch lt.Kind {
	case managedfields.ListMap:
		want, ok := itemKey(litem, lt)
		if !ok {
			break
		}
		for j, it := range items {
			if k, ok := itemKey(it, lt); ok && k == want {
				return j
			}
		}
		return -1
	case managedfields.ListSet:
		want, err := json.Marshal(litem)
		if err != nil {
			break
		}
		for j, it := range items {
			if b, err := json.Marshal(it); err == nil && string(b) == string(want) {
				return j
			}
		}
		return -1
	}
	if idx < len(items) {
		return idx
	}
	return -1
}

// itemKey renders an associative-list item's key values (defaults filled
// in, as the API server fills them: a port's protocol is TCP).
func itemKey(item any, lt managedfields.ListType) (string, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return "", false
	}
	vals := make([]any, len(lt.Keys))
	for i, k := range lt.Keys {
		v, has := m[k]
		if !has || v == nil {
			if v, has = lt.Defaults[k]; !has {
				return "", false
			}
		}
		// 80 and 80.0 are the same key (YAML vs JSON decoding).
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			v = int64(f)
		}
		if n, ok := v.(int); ok {
			v = int64(n)
		}
		vals[i] = v
	}
	b, err := json.Marshal(vals)
	return string(b), err == nil
}

// lookupKeyed is the package's lookupKeyed on the judgment's live object,
// through its memo.
func (j *judgment) lookupKeyed(other any, pointer string) (any, bool) {
	return lookupKeyed(j.ix, j.live, other, pointer, &j.items)
}
