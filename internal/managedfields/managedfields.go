// Package managedfields answers "who owns this field now" from an object's
// metadata.managedFields, using structured-merge-diff field sets exactly as
// the API server writes them, so that items of associative lists (containers
// keyed by name, ports by containerPort+protocol, env by name...) are
// attributed to the right item and not to whatever sits at the same index.
package managedfields

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// Entry is one decoded metadata.managedFields entry.
type Entry struct {
	Manager     string
	Operation   string
	Subresource string
	APIVersion  string
	Time        *time.Time
	// Fields is the decoded FieldsV1 set; never nil.
	Fields *fieldpath.Set
}

// Ref is the entry as a model.ManagerRef, classified.
func (e Entry) Ref() model.ManagerRef {
	return model.ManagerRef{
		Manager:     e.Manager,
		Operation:   e.Operation,
		Subresource: e.Subresource,
		Time:        e.Time,
		Class:       Classify(e.Manager, e.Operation, e.Subresource),
	}
}

// OwnedField is one leaf field of an object and the managers owning it.
type OwnedField struct {
	// Pointer is the RFC 6901 pointer into the object, list items by index.
	Pointer string
	// FieldPath names list items by their keys: .spec.containers[name=app].image
	FieldPath string
	// Owners are the managers owning the field, most recent first.
	Owners []model.ManagerRef
}

// Index is the parsed managedFields of one object. It is read-only after
// Parse and safe for concurrent use.
type Index struct {
	entries []Entry // most recent first
	refs    []model.ManagerRef
	// union is every entry's set merged: it tells which list items anybody
	// keys (and so how the list is keyed) and which fields are atomic.
	union *fieldpath.Set
	// listTypes remembers listTypeOfSet per node of union: finding it
	// walks the whole node (structured-merge-diff's Iterate cannot stop),
	// and it is asked once per list item, which made a list of n items
	// cost n² (issue 29: 100k env vars took explain 39 s).
	listTypesMu sync.Mutex
	listTypes   map[*fieldpath.Set]listTypeResult
	// leavesOf and leaves remember the last Leaves answer: the pipeline
	// asks it of the same live object twice (diff.Infer, then the Flux
	// judge's cleanup check), and the walk was a fifth of a drifted
	// object's cost in scan (issue 35).
	leavesMu sync.Mutex
	leavesOf *unstructured.Unstructured
	leaves   []OwnedField
}

// listTypeResult is a remembered listTypeOfSet answer.
type listTypeResult struct {
	lt ListType
	ok bool
}

// Parse decodes obj's metadata.managedFields. An object without
// managedFields gives an Empty index, not an error; malformed entries (wrong
// types, unparsable FieldsV1, bad times) are an error naming the entry.
//
// FieldsV1 is decoded with fieldpath.Set.FromJSON, as the API server does
// (k8s.io/apimachinery/pkg/util/managedfields/internal/managedfields.go
// decodeVersionedSet, fields.go FieldsToSet).
func Parse(obj *unstructured.Unstructured) (*Index, error) {
	ix := &Index{union: &fieldpath.Set{}}
	if obj == nil || obj.Object == nil {
		return ix, nil
	}
	mdRaw, ok := obj.Object["metadata"]
	if !ok || mdRaw == nil {
		return ix, nil
	}
	md, ok := mdRaw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("metadata is a %s, not an object", model.ValueKind(mdRaw, "object", "list"))
	}
	raw, ok := md["managedFields"]
	if !ok || raw == nil {
		return ix, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("metadata.managedFields is a %s, not a list", model.ValueKind(raw, "object", "list"))
	}
	ix.entries = make([]Entry, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("metadata.managedFields[%d] is a %s, not an object", i, model.ValueKind(item, "object", "list"))
		}
		e, err := parseEntry(m)
		if err != nil {
			if e.Manager != "" {
				return nil, fmt.Errorf("metadata.managedFields[%d] (manager %q): %w", i, e.Manager, err)
			}
			return nil, fmt.Errorf("metadata.managedFields[%d]: %w", i, err)
		}
		ix.entries = append(ix.entries, e)
	}
	// Most recent first; entries without a time go last; ties keep the
	// server's order.
	sort.SliceStable(ix.entries, func(i, j int) bool {
		a, b := ix.entries[i].Time, ix.entries[j].Time
		if a == nil || b == nil {
			return a != nil && b == nil
		}
		return a.After(*b)
	})
	ix.refs = make([]model.ManagerRef, len(ix.entries))
	for i, e := range ix.entries {
		ix.refs[i] = e.Ref()
		ix.union = ix.union.Union(e.Fields)
	}
	return ix, nil
}

// ParseOnce returns parsed when it is obj's Index already (what a caller
// handed on, model.JudgeInput.ManagedFields), else Parse(obj).
func ParseOnce(parsed any, obj *unstructured.Unstructured) (*Index, error) {
	if ix, ok := parsed.(*Index); ok && ix != nil {
		return ix, nil
	}
	return Parse(obj)
}

func parseEntry(m map[string]any) (Entry, error) {
	var e Entry
	var err error
	str := func(key string) string {
		if err != nil {
			return ""
		}
		v, ok := m[key]
		if !ok || v == nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			err = fmt.Errorf("%s is a %s, not a string", key, model.ValueKind(v, "object", "list"))
		}
		return s
	}
	e.Manager = str("manager")
	e.Operation = str("operation")
	e.Subresource = str("subresource")
	e.APIVersion = str("apiVersion")
	ts := str("time")
	ft := str("fieldsType")
	if err != nil {
		return e, err
	}
	if ts != "" {
		t, perr := time.Parse(time.RFC3339, ts)
		if perr != nil {
			return e, fmt.Errorf("time %q: %w", ts, perr)
		}
		t = t.UTC()
		e.Time = &t
	}
	if ft != "" && ft != "FieldsV1" {
		return e, fmt.Errorf("unsupported fieldsType %q (only FieldsV1 exists)", ft)
	}
	e.Fields = &fieldpath.Set{}
	fv, ok := m["fieldsV1"]
	if !ok || fv == nil {
		return e, nil
	}
	if _, ok := fv.(map[string]any); !ok {
		return e, fmt.Errorf("fieldsV1 is a %s, not an object", model.ValueKind(fv, "object", "list"))
	}
	raw, merr := appendFieldsJSON(make([]byte, 0, 1024), fv)
	if merr != nil {
		return e, fmt.Errorf("fieldsV1: %w", merr)
	}
	if ferr := e.Fields.FromJSON(bytes.NewReader(raw)); ferr != nil {
		return e, fmt.Errorf("fieldsV1: %w", ferr)
	}
	return e, nil
}

// appendFieldsJSON re-encodes a decoded FieldsV1 tree for Set.FromJSON.
// FieldsV1 is nested objects of "{}" leaves, so objects and plain ASCII keys
// are written directly (encoding/json's reflection was a third of Parse);
// anything else goes through encoding/json.
//
// Key order does not change the Set, but it decides its cost: FromJSON
// inserts each child into a sorted slice (fieldpath PathElementSet.Insert,
// SetNodeMap.Descend: binary search, then slices.Insert). The API server
// writes children in that order, so it only appends; Go map order made it
// insert at random places, quadratic in the children (100k env items: a
// minute). Children are written in the Set's own order.
func appendFieldsJSON(b []byte, v any) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		raw, err := json.Marshal(v)
		return append(b, raw...), err
	}
	b = append(b, '{')
	for i, k := range setOrder(m) {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSONString(b, k); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendFieldsJSON(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// setOrder lists the keys of a FieldsV1 object in fieldpath's order
// (PathElement.Compare); "." and keys that are not path elements come
// first (FromJSON rejects the latter anyway).
func setOrder(m map[string]any) []string {
	type key struct {
		s  string
		pe fieldpath.PathElement
		ok bool
	}
	if len(m) < 2 {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	keys := make([]key, 0, len(m))
	for k := range m {
		kk := key{s: k}
		if k != "." {
			pe, err := fieldpath.DeserializePathElement(k)
			kk.pe, kk.ok = pe, err == nil
		}
		keys = append(keys, kk)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.ok != b.ok {
			return !a.ok
		}
		if !a.ok {
			return a.s < b.s
		}
		return a.pe.Compare(b.pe) < 0
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.s
	}
	return out
}

func appendJSONString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 {
			raw, err := json.Marshal(s)
			return append(b, raw...), err
		}
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, '\\', c)
		} else {
			b = append(b, c)
		}
	}
	return append(b, '"'), nil
}

// Empty reports whether the object carried no managedFields at all, e.g. it
// was saved with `kubectl get -o yaml` without --show-managed-fields. Then no
// ownership can be known and every managers rule silently does nothing:
// callers must warn.
func (ix *Index) Empty() bool { return ix == nil || len(ix.entries) == 0 }

// Entries returns the entries, most recent first.
func (ix *Index) Entries() []Entry {
	if ix == nil {
		return nil
	}
	return append([]Entry(nil), ix.entries...)
}

// step is one resolved path element of a pointer, with what the union of
// all managers' sets says about it.
type step struct {
	pe fieldpath.PathElement
	// atomic: some manager owns this field as a whole and nobody owns
	// anything below it separately, so the owner owns all below (an atomic
	// list, an atomic struct such as a LabelSelector, or a granular field
	// nobody has split yet).
	atomic bool
}

// resolve maps pointer tokens, read against obj, to structured-merge-diff
// path elements. List items are named the way the managers' sets name them:
// k:{...} from the item's own key values, v: for sets, i: otherwise. ok is
// false when the pointer cannot be followed through obj (index out of range,
// descending into a scalar); the steps are still a best-effort path.
func (ix *Index) resolve(obj *unstructured.Unstructured, tokens []string) (steps []step, ok bool) {
	ok = true
	var cur any
	if obj != nil {
		cur = obj.Object
	}
	node := ix.union
	steps = make([]step, 0, len(tokens))
	for i, tok := range tokens {
		var pe fieldpath.PathElement
		switch c := cur.(type) {
		case map[string]any:
			pe = fieldpath.FieldNameElement(tok)
			cur = c[tok]
		case []any:
			idx, err := strconv.Atoi(tok)
			if err != nil || !isIndex(tok) || idx >= len(c) {
				ok = false
				pe = fieldpath.FieldNameElement(tok)
				if err == nil && isIndex(tok) {
					pe = fieldpath.IndexElement(idx)
				}
				cur = nil
				break
			}
			pe = itemElement(ix.listType(node, tokens[:i]), c[idx], idx)
			cur = c[idx]
		case nil:
			// Beyond what obj holds: keep naming fields.
			pe = fieldpath.FieldNameElement(tok)
		default:
			ok = false
			pe = fieldpath.FieldNameElement(tok)
			cur = nil
		}
		st := step{pe: pe}
		var child *fieldpath.Set
		if node != nil {
			member := node.Members.Has(pe)
			c, has := node.Children.Get(pe)
			if has {
				child = c
			}
			st.atomic = member && (child == nil || child.Empty())
		}
		steps = append(steps, st)
		node = child
	}
	return steps, ok
}

// listType says how the list whose union subset is node is keyed: from the
// k:/v:/i: elements any manager recorded for its items, else the builtin
// table of core API list types.
func (ix *Index) listType(node *fieldpath.Set, tokens []string) ListType {
	if node != nil {
		if lt, ok := ix.listTypeOf(node); ok {
			if lt.Kind == ListMap {
				lt.Defaults = keyDefaults(tokens, lt.Keys)
			}
			return lt
		}
	}
	return BuiltinListType(tokens)
}

// listTypeOf is listTypeOfSet of node, remembered.
func (ix *Index) listTypeOf(node *fieldpath.Set) (ListType, bool) {
	ix.listTypesMu.Lock()
	defer ix.listTypesMu.Unlock()
	if r, ok := ix.listTypes[node]; ok {
		return r.lt, r.ok
	}
	lt, ok := listTypeOfSet(node)
	if ix.listTypes == nil {
		ix.listTypes = map[*fieldpath.Set]listTypeResult{}
	}
	ix.listTypes[node] = listTypeResult{lt, ok}
	return lt, ok
}

func listTypeOfSet(node *fieldpath.Set) (ListType, bool) {
	var found ListType
	ok := false
	// Iterate, not All: SetNodeMap.All in structured-merge-diff v6.4.2 does
	// not stop when the loop body breaks.
	check := func(pe fieldpath.PathElement) {
		if ok {
			return
		}
		switch {
		case pe.Key != nil:
			keys := make([]string, len(*pe.Key))
			for i, f := range *pe.Key {
				keys[i] = f.Name
			}
			found, ok = ListType{Kind: ListMap, Keys: keys}, true
		case pe.Value != nil:
			found, ok = ListType{Kind: ListSet}, true
		case pe.Index != nil:
			found, ok = ListType{Kind: ListAtomic}, true
		}
	}
	node.Children.Iterate(check)
	node.Members.Iterate(check)
	return found, ok
}

// itemElement names one list item as structured-merge-diff does
// (sigs.k8s.io/structured-merge-diff/v6/typed/helpers.go keyedAssociativeListItemToPathElement).
func itemElement(lt ListType, item any, idx int) fieldpath.PathElement {
	switch lt.Kind {
	case ListMap:
		m, ok := item.(map[string]any)
		if !ok {
			return fieldpath.IndexElement(idx)
		}
		fields := make(value.FieldList, 0, len(lt.Keys))
		for _, k := range lt.Keys {
			v, has := m[k]
			if !has {
				d, hasDefault := lt.Defaults[k]
				if !hasDefault {
					continue
				}
				v = d
			}
			fields = append(fields, value.Field{Name: k, Value: value.NewValueInterface(v)})
		}
		if len(fields) == 0 {
			return fieldpath.IndexElement(idx)
		}
		fields.Sort()
		return fieldpath.KeyElement(fields...)
	case ListSet:
		switch item.(type) {
		case map[string]any, []any:
			return fieldpath.IndexElement(idx)
		}
		return fieldpath.ValueElement(value.NewValueInterface(item))
	}
	return fieldpath.IndexElement(idx)
}

// ListType reports how the list at pointer in obj is keyed: from the
// managedFields of this index when any manager owns one of its items, else
// from the builtin table (BuiltinListType). obj need not be the object the
// index was parsed from: a desired object walks the same paths.
func (ix *Index) ListType(obj *unstructured.Unstructured, pointer string) ListType {
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return ListType{}
	}
	if ix == nil {
		return BuiltinListType(tokens)
	}
	steps, _ := ix.resolve(obj, tokens)
	node := ix.union
	for _, st := range steps {
		if node == nil {
			break
		}
		c, ok := node.Children.Get(st.pe)
		if !ok {
			node = nil
			break
		}
		node = c
	}
	return ix.listType(node, tokens)
}

// Owners returns the managers that own the field at pointer (RFC 6901, list
// items by index in obj) or any field below it, most recent first. A manager
// that owns an atomic ancestor (an atomic list or struct) owns the field too.
// An invalid or unresolvable pointer has no owners.
func (ix *Index) Owners(obj *unstructured.Unstructured, pointer string) []model.ManagerRef {
	if ix.Empty() {
		return nil
	}
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return nil
	}
	steps, ok := ix.resolve(obj, tokens)
	if !ok {
		return nil
	}
	var out []model.ManagerRef
	for i, e := range ix.entries {
		if owns(e.Fields, steps) {
			out = append(out, ix.refs[i])
		}
	}
	return out
}

func owns(s *fieldpath.Set, steps []step) bool {
	if len(steps) == 0 {
		return !s.Empty()
	}
	for j, st := range steps {
		member := s.Members.Has(st.pe)
		child, has := s.Children.Get(st.pe)
		if j == len(steps)-1 {
			return member || (has && !child.Empty())
		}
		if member && st.atomic {
			return true
		}
		if !has {
			return false
		}
		s = child
	}
	return false
}

// FieldPath renders pointer (list items by index in obj) with associative
// list items named by their keys, the way the API server keys them:
// /spec/template/spec/containers/0/image becomes
// .spec.template.spec.containers[name=app].image, a port item
// [containerPort=80,protocol=TCP], a set item [=value], an atomic list item
// [0]. Keys are learnt from obj's own managedFields, else from the builtin
// table of core list types. An invalid pointer is returned unchanged. It
// parses obj's managedFields on every call: for many pointers of one object,
// Parse once and use Index.FieldPath.
func FieldPath(obj *unstructured.Unstructured, pointer string) string {
	ix, err := Parse(obj)
	if err != nil {
		ix = &Index{union: &fieldpath.Set{}}
	}
	return ix.FieldPath(obj, pointer)
}

// FieldPath is FieldPath with keys learnt from this index, which may belong
// to another object than obj (a live object's index for its desired twin).
func (ix *Index) FieldPath(obj *unstructured.Unstructured, pointer string) string {
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return pointer
	}
	if ix == nil {
		ix = &Index{union: &fieldpath.Set{}}
	}
	steps, _ := ix.resolve(obj, tokens)
	var b strings.Builder
	for _, st := range steps {
		writeElement(&b, st.pe)
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}

// writeElement follows fieldpath.PathElement.String
// (sigs.k8s.io/structured-merge-diff/v6/fieldpath/element.go) but leaves
// plain string key values unquoted, as kubectl users write them, and
// brackets field names that contain dots or slashes (label keys).
func writeElement(b *strings.Builder, pe fieldpath.PathElement) {
	switch {
	case pe.FieldName != nil:
		name := *pe.FieldName
		if plainName(name) {
			b.WriteByte('.')
			b.WriteString(name)
		} else {
			b.WriteString("[")
			b.WriteString(strconv.Quote(name))
			b.WriteString("]")
		}
	case pe.Key != nil:
		b.WriteByte('[')
		for i, f := range *pe.Key {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f.Name)
			b.WriteByte('=')
			b.WriteString(displayValue(f.Value))
		}
		b.WriteByte(']')
	case pe.Value != nil:
		b.WriteString("[=")
		b.WriteString(displayValue(*pe.Value))
		b.WriteByte(']')
	case pe.Index != nil:
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(*pe.Index))
		b.WriteByte(']')
	}
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func displayValue(v value.Value) string {
	if v.IsString() {
		s := v.AsString()
		if s == "" || strings.ContainsAny(s, ",=[]\"' \t\n") {
			return strconv.Quote(s)
		}
		return s
	}
	if v.IsNull() {
		return "null"
	}
	if v.IsInt() {
		return strconv.FormatInt(v.AsInt(), 10)
	}
	if v.IsFloat() {
		return strconv.FormatFloat(v.AsFloat(), 'g', -1, 64)
	}
	if v.IsMap() || v.IsList() {
		raw, err := json.Marshal(v.Unstructured())
		if err != nil {
			return "?"
		}
		return string(raw)
	}
	return value.ToString(v)
}

// Leaves returns every leaf field of obj that some manager owns, with its
// owners, sorted by pointer. A field owned as a whole (an atomic list or
// struct) is one leaf; so is an empty object or list. Fields nobody owns
// (API server defaults) are not returned. The answer for the object last
// asked about is remembered (callers hand the same unmodified live object
// to every step), so the slice is shared: callers must not modify it.
func (ix *Index) Leaves(obj *unstructured.Unstructured) []OwnedField {
	if ix.Empty() || obj == nil || obj.Object == nil {
		return nil
	}
	ix.leavesMu.Lock()
	defer ix.leavesMu.Unlock()
	if ix.leavesOf == obj {
		return ix.leaves
	}
	ix.leavesOf, ix.leaves = obj, ix.walkLeaves(obj)
	return ix.leaves
}

// walkLeaves finds Leaves' answer.
func (ix *Index) walkLeaves(obj *unstructured.Unstructured) []OwnedField {
	w := leafWalker{ix: ix}
	sets := make([]*fieldpath.Set, len(ix.entries))
	for i, e := range ix.entries {
		sets[i] = e.Fields
	}
	w.walk(obj.Object, "", nil, nil, ix.union, sets)
	sort.Slice(w.out, func(i, j int) bool { return w.out[i].Pointer < w.out[j].Pointer })
	return w.out
}

type leafWalker struct {
	ix  *Index
	out []OwnedField
}

func (w *leafWalker) walk(v any, ptr string, tokens []string, path []fieldpath.PathElement, union *fieldpath.Set, sets []*fieldpath.Set) {
	switch c := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(c))
		for _, k := range keys {
			w.child(c[k], ptr, k, append(tokens, k), append(path, fieldpath.FieldNameElement(k)), union, sets)
		}
	case []any:
		lt := w.ix.listType(union, tokens)
		for i, item := range c {
			tok := strconv.Itoa(i)
			w.child(item, ptr, tok, append(tokens, tok), append(path, itemElement(lt, item, i)), union, sets)
		}
	}
}

// child visits one field of a container; parent is the container's pointer
// and tok the field's token (the pointer is only built for fields somebody
// owns: most of an object's fields are defaults nobody owns).
func (w *leafWalker) child(v any, parent, tok string, tokens []string, path []fieldpath.PathElement, union *fieldpath.Set, sets []*fieldpath.Set) {
	pe := path[len(path)-1]
	uMember := union.Members.Has(pe)
	uChild, uHas := union.Children.Get(pe)
	if !uMember && !uHas {
		return // nobody owns anything here
	}
	ptr := parent + "/" + jsonpointer.Escape(tok)
	atomic := uMember && (!uHas || uChild.Empty())
	if atomic || isLeafValue(v) {
		var owners []model.ManagerRef
		for i, s := range sets {
			if s == nil {
				continue
			}
			if s.Members.Has(pe) {
				owners = append(owners, w.ix.refs[i])
				continue
			}
			if c, ok := s.Children.Get(pe); ok && !c.Empty() {
				owners = append(owners, w.ix.refs[i])
			}
		}
		if len(owners) > 0 {
			w.out = append(w.out, OwnedField{Pointer: ptr, FieldPath: renderPath(path), Owners: owners})
		}
		return
	}
	childSets := make([]*fieldpath.Set, len(sets))
	found := false
	for i, s := range sets {
		if s == nil {
			continue
		}
		if c, ok := s.Children.Get(pe); ok {
			childSets[i] = c
			found = true
		}
	}
	if !found {
		return
	}
	w.walk(v, ptr, tokens, path, uChild, childSets)
}

func isLeafValue(v any) bool {
	switch c := v.(type) {
	case map[string]any:
		return len(c) == 0
	case []any:
		return len(c) == 0
	}
	return true
}

func renderPath(path []fieldpath.PathElement) string {
	var b strings.Builder
	b.Grow(16 * len(path))
	for _, pe := range path {
		writeElement(&b, pe)
	}
	return b.String()
}
