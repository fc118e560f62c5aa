package smpatch

import (
	"fmt"
	"reflect"
)

// The indexes below replace strategicpatch's per-item scans of a list
// (index, findMapInSliceBasedOnKeyValue, deleteMatchingEntries): each
// answers what the scan answers (the first match, the same error), built
// in one pass. strategicpatch compares merge-key values with ==; a map
// or a list as a merge key (a broken input) cannot key a Go map, so a
// list holding one keeps the original scans, panics included.

// hashable says whether v can key a Go map. JSON decodes to nil, bool,
// string, int64, float64, maps and lists.
func hashable(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	t := reflect.TypeOf(v)
	return t == nil || t.Comparable()
}

// positions answers index(order, x, mergeKey, kind) for any x.
type positions struct {
	order    []any
	mergeKey string
	kind     reflect.Kind
	// first is the first position of each value in order; nil when a
	// value cannot key it (then index scans).
	first map[any]int
}

func newPositions(order []any, mergeKey string, kind reflect.Kind) *positions {
	p := &positions{order: order, mergeKey: mergeKey, kind: kind}
	first := make(map[any]int, len(order))
	for i, v := range order {
		k := p.value(v)
		if !hashable(k) {
			return p
		}
		if _, seen := first[k]; !seen {
			first[k] = i
		}
	}
	p.first = first
	return p
}

// value is index's getValFn: the merge key of a map, the item itself
// for scalars.
func (p *positions) value(item any) any {
	if p.kind != reflect.Map {
		return item
	}
	m, ok := item.(map[string]any)
	if !ok {
		return nil
	}
	return m[p.mergeKey]
}

func (p *positions) index(x any) int {
	if p.first == nil {
		return index(p.order, x, p.mergeKey, p.kind)
	}
	k := p.value(x)
	if !hashable(k) {
		// Every value of order is of a comparable type, so of another
		// type than k: == is false for all, as the scan finds.
		return -1
	}
	if i, ok := p.first[k]; ok {
		return i
	}
	return -1
}

// mapIndex answers findMapInSliceBasedOnKeyValue(m, key, value) for any
// value, kept current as mergeSliceWithoutSpecialElements merges into
// and appends to m.
type mapIndex struct {
	m   []any
	key string
	// first is the first position of each key value among the maps
	// before nonMap, the first element that is not a map (-1: none).
	first  map[any]int
	nonMap int
	// linear: a key value cannot key first; scan as the original does.
	linear bool
}

func newMapIndex(m []any, key string) *mapIndex {
	ix := &mapIndex{key: key}
	ix.build(m)
	return ix
}

func (ix *mapIndex) build(m []any) {
	ix.m, ix.first, ix.nonMap, ix.linear = m, make(map[any]int, len(m)), -1, false
	for k, v := range m {
		typed, ok := v.(map[string]any)
		if !ok {
			ix.nonMap = k
			return
		}
		val, ok := typed[ix.key]
		if !ok {
			continue
		}
		if !hashable(val) {
			ix.linear = true
			return
		}
		if _, seen := ix.first[val]; !seen {
			ix.first[val] = k
		}
	}
}

func (ix *mapIndex) find(value any) (map[string]any, int, bool, error) {
	if ix.linear {
		return findMapInSliceBasedOnKeyValue(ix.m, ix.key, value)
	}
	if hashable(value) {
		if k, ok := ix.first[value]; ok {
			return ix.m[k].(map[string]any), k, true, nil
		}
	}
	// Not among the maps before the first non-map (an unhashable value
	// equals none of them: their values are of comparable types); the
	// scan then reaches that element and fails on it.
	if ix.nonMap >= 0 {
		return nil, 0, false, fmt.Errorf("value for key %v is not a map", ix.nonMap)
	}
	return nil, 0, false, nil
}

// replaced: m[k], found for value, now holds the merge of the patch
// item into it. Its key is value again, unless the merge removed it (a
// null key merges as a deletion): then the index is built anew.
func (ix *mapIndex) replaced(k int, value any) {
	if ix.linear {
		return
	}
	if typed, ok := ix.m[k].(map[string]any); ok {
		if v, ok := typed[ix.key]; ok && hashable(v) && v == value {
			return
		}
	}
	ix.build(ix.m)
}

// appended: m is the list with an item of key value appended.
func (ix *mapIndex) appended(m []any, value any) {
	ix.m = m
	if ix.linear {
		return
	}
	if !hashable(value) {
		ix.linear = true
		return
	}
	if _, seen := ix.first[value]; !seen {
		ix.first[value] = len(m) - 1
	}
}

// indexable says whether deleteAll can stand for deleteMatchingEntries
// on list: every item a map (else the scan fails), every key value
// hashable.
func indexable(list []any, key string) bool {
	for _, v := range list {
		typed, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if val, ok := typed[key]; ok && !hashable(val) {
			return false
		}
	}
	return true
}

// deleteAll does what deleteMatchingEntries(original, key, v) does for
// each v of values in turn, in one pass over an indexable list. Each of
// those calls removes the first match by shifting the rest of the list
// left, until no match is left; the shifts leave, in the backing array
// past the new length, what mergePatchIntoOriginal still reads through
// its own header of the list (originalFieldValue, the server order it
// sorts by): a deletion that makes the list L-1 long leaves at position
// L-1 the list's last item as it stood before. deleteAll leaves the same.
func deleteAll(original []any, key string, values []any) []any {
	if len(values) == 0 {
		return original
	}
	byValue := map[any][]int{}
	for i, v := range original {
		if val, ok := v.(map[string]any)[key]; ok {
			byValue[val] = append(byValue[val], i)
		}
	}
	n := len(original)
	alive := make([]bool, n)
	for i := range alive {
		alive[i] = true
	}
	tail := make([]any, n)
	last, length := n-1, n
	for _, v := range values {
		if !hashable(v) {
			continue // equals no key value (all of comparable types)
		}
		for _, i := range byValue[v] {
			tail[length-1] = original[last]
			alive[i] = false
			length--
			for last >= 0 && !alive[last] {
				last--
			}
		}
		delete(byValue, v)
	}
	if length == n {
		return original
	}
	w := 0
	for i := range n {
		if alive[i] {
			original[w] = original[i]
			w++
		}
	}
	copy(original[length:n], tail[length:n])
	return original[:length]
}
