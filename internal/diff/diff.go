// Package diff compares a desired object with its live twin field by field
// and reports each difference at the deepest field that differs, with list
// items of associative lists matched by their keys (as the API server's
// structured-merge-diff does), not by their position.
package diff

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// Mask replaces Secret values in Desired and Live.
const Mask = redact.Mask

// Options tune Compute.
type Options struct {
	// Owned reports whether some manager owns the live field at pointer;
	// nil means unknown (no managedFields). A field present live but absent
	// from desired is drift only when some manager owns it: API server
	// defaults are owned by nobody. With Owned nil every such field is
	// reported and the caller should warn that defaults may show up.
	Owned func(pointer string) bool
	// Index is the live object's parsed managedFields, when the caller has
	// it already; nil makes Compute parse them (it learns list keys there).
	Index *managedfields.Index
	// CompareStatus keeps status in the comparison when the desired state
	// sets one (a CR with status in Git): Argo CD compares it unless
	// resource.compareoptions ignoreResourceStatusField hides it, which the
	// adapter decides. By default status is never drift.
	CompareStatus bool
}

// Compute compares desired with live and returns the drifted fields sorted
// by Path. Path is a pointer into live (into desired for a Removed field);
// Desired and Live are JSON values, Secret data masked. Managers, Cause and
// Verdicts are left for the caller.
func Compute(desired, live *unstructured.Unstructured, opts Options) ([]model.FieldDrift, error) {
	if desired == nil || desired.Object == nil {
		return nil, fmt.Errorf("no desired object")
	}
	if live == nil || live.Object == nil {
		return nil, fmt.Errorf("no live object")
	}
	if dk, lk := desired.GetKind(), live.GetKind(); dk != "" && lk != "" && dk != lk {
		return nil, fmt.Errorf("desired object is a %s but the live object is a %s", dk, lk)
	}
	dm, err := working(desired.Object)
	if err != nil {
		return nil, fmt.Errorf("desired %s: %w", objName(desired), err)
	}
	lm, err := working(live.Object)
	if err != nil {
		return nil, fmt.Errorf("live %s: %w", objName(live), err)
	}
	ix := opts.Index
	if ix == nil {
		if ix, err = managedfields.Parse(live); err != nil {
			// Ownership is optional here: keys fall back to the builtin table.
			ix = nil
		}
	}
	c := &differ{
		owned:   opts.Owned,
		ix:      ix,
		live:    live,
		desired: &unstructured.Unstructured{Object: dm},
		secret:  isSecret(live) || isSecret(desired),
		builtin: IsBuiltinGroup(live.GroupVersionKind().Group),
		// Never nil: "drifts": [] in JSON output, not null.
		out: []model.FieldDrift{},
	}
	keepStatus := opts.CompareStatus && dm["status"] != nil
	stripServerFields(dm, lm, keepStatus)
	if c.secret {
		secretToData(dm)
	}
	c.walk(dm, lm, nil, nil)
	sort.SliceStable(c.out, func(i, j int) bool { return c.out[i].Path < c.out[j].Path })
	return c.out, nil
}

func objName(o *unstructured.Unstructured) string {
	if o.GetNamespace() != "" {
		return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	return strings.TrimSpace(o.GetKind() + " " + o.GetName())
}

type differ struct {
	owned   func(string) bool
	ix      *managedfields.Index
	live    *unstructured.Unstructured
	desired *unstructured.Unstructured
	secret  bool
	// builtin: quantities compare by amount (see builtinGroup).
	builtin bool
	out     []model.FieldDrift
}

func (c *differ) walk(d, l any, dTok, lTok []string) {
	switch dv := d.(type) {
	case map[string]any:
		lv, ok := l.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(dv)+len(lv))
		for k := range dv {
			keys = append(keys, k)
		}
		for k := range lv {
			if _, dup := dv[k]; !dup {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			dc, dok := dv[k]
			lc, lok := lv[k]
			if dok && dc == nil {
				dok = false // null in a manifest unsets the field
			}
			if lok && lc == nil {
				lok = false
			}
			switch {
			case !dok && !lok:
			case !dok:
				c.added(lc, appendTok(lTok, k), false)
			case !lok:
				c.removed(dc, appendTok(dTok, k))
			default:
				c.walk(dc, lc, appendTok(dTok, k), appendTok(lTok, k))
			}
		}
		return
	case []any:
		lv, ok := l.([]any)
		if !ok {
			break
		}
		c.walkList(dv, lv, dTok, lTok)
		return
	}
	if !c.equalScalar(d, l, lTok) {
		c.emit(model.Changed, lTok, d, l)
	}
}

func appendTok(toks []string, t string) []string {
	out := make([]string, len(toks)+1)
	copy(out, toks)
	out[len(toks)] = t
	return out
}

// walkList pairs desired and live items: associative lists by their keys,
// sets by value, everything else by index.
func (c *differ) walkList(d, l []any, dTok, lTok []string) {
	ptr := jsonpointer.Join(lTok...)
	var lt managedfields.ListType
	if c.ix != nil {
		lt = c.ix.ListType(c.live, ptr)
	} else {
		lt = managedfields.BuiltinListType(lTok)
	}
	var dKeys, lKeys []string
	ok := false
	switch lt.Kind {
	case managedfields.ListMap:
		dKeys, ok = itemKeys(d, lt)
		if ok {
			lKeys, ok = itemKeys(l, lt)
		}
	case managedfields.ListSet:
		dKeys, ok = valueKeys(d)
		if ok {
			lKeys, ok = valueKeys(l)
		}
	}
	if !ok {
		n := min(len(d), len(l))
		for i := 0; i < n; i++ {
			s := strconv.Itoa(i)
			c.walk(d[i], l[i], appendTok(dTok, s), appendTok(lTok, s))
		}
		for i := n; i < len(d); i++ {
			c.removed(d[i], appendTok(dTok, strconv.Itoa(i)))
		}
		for i := n; i < len(l); i++ {
			c.added(l[i], appendTok(lTok, strconv.Itoa(i)), true)
		}
		return
	}
	dIdx := make(map[string]int, len(dKeys))
	for i, k := range dKeys {
		dIdx[k] = i
	}
	seen := make([]bool, len(d))
	for li, k := range lKeys {
		s := strconv.Itoa(li)
		di, has := dIdx[k]
		if !has {
			c.added(l[li], appendTok(lTok, s), true)
			continue
		}
		seen[di] = true
		c.walk(d[di], l[li], appendTok(dTok, strconv.Itoa(di)), appendTok(lTok, s))
	}
	for di := range d {
		if !seen[di] {
			c.removed(d[di], appendTok(dTok, strconv.Itoa(di)))
		}
	}
}

// itemKeys renders each item's key values; ok is false when an item lacks a
// key (and no default fills it) or two items share a key, and the list is
// then compared by index.
func itemKeys(items []any, lt managedfields.ListType) ([]string, bool) {
	out := make([]string, len(items))
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, false
		}
		vals := make([]any, len(lt.Keys))
		for j, k := range lt.Keys {
			v, has := m[k]
			if !has || v == nil {
				v, has = lt.Defaults[k]
				if !has {
					return nil, false
				}
			}
			vals[j] = canonicalScalar(v)
		}
		raw, err := json.Marshal(vals)
		if err != nil {
			return nil, false
		}
		if seen[string(raw)] {
			return nil, false
		}
		seen[string(raw)] = true
		out[i] = string(raw)
	}
	return out, true
}

func valueKeys(items []any) ([]string, bool) {
	out := make([]string, len(items))
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		raw, err := json.Marshal(canonicalScalar(it))
		if err != nil || seen[string(raw)] {
			return nil, false
		}
		seen[string(raw)] = true
		out[i] = string(raw)
	}
	return out, true
}

// canonicalScalar makes 80 and 80.0 render the same.
func canonicalScalar(v any) any {
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return v
}

// added handles a field present live and absent from desired. Owned
// ownership decides: nobody owns API server defaults
// (k8s.io/apimachinery/pkg/util/managedfields: defaulted fields never enter a
// manager's set), so a field nobody owns is not drift. A whole list item is
// one drift (an injected sidecar is one change, not twenty).
func (c *differ) added(v any, tok []string, item bool) {
	if isEmptyContainer(v) {
		return
	}
	if c.owned == nil {
		c.emit(model.Added, tok, nil, v)
		return
	}
	if !c.owned(jsonpointer.Join(tok...)) || c.engineDefault(tok) {
		return
	}
	m, isMap := v.(map[string]any)
	if !isMap || item {
		c.emit(model.Added, tok, nil, v)
		return
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		if m[k] == nil {
			continue
		}
		c.added(m[k], appendTok(tok, k), false)
	}
}

// engineDefault: a field only client-side appliers own through Updates and
// that their last-applied configuration does not name is a default the API
// server charged them with, not drift (managedfields.Index.ClientSideDefault).
func (c *differ) engineDefault(tok []string) bool {
	return c.ix != nil && c.ix.ClientSideDefault(c.live, jsonpointer.Join(tok...))
}

// removed handles a field set in desired and absent live. Empty objects
// and lists, "", false and 0 are not drift: built-in types serialize with
// omitempty, so the API server drops them (encoding/json), and a manifest
// setting them reads the same as one leaving them out.
func (c *differ) removed(v any, tok []string) {
	if isVacuous(v) {
		return
	}
	c.emit(model.Removed, tok, v, nil)
}

func (c *differ) emit(kind model.ChangeKind, tok []string, desired, live any) {
	ptr := jsonpointer.Join(tok...)
	obj := c.live
	if kind == model.Removed {
		obj = c.desired
	}
	var fp string
	if c.ix != nil {
		fp = c.ix.FieldPath(obj, ptr)
	} else {
		fp = managedfields.FieldPath(obj, ptr)
	}
	if c.secret && redact.ValuePath(ptr) {
		desired, live = redact.Value(desired), redact.Value(live)
	}
	c.out = append(c.out, model.FieldDrift{
		Path:      ptr,
		FieldPath: fp,
		Change:    kind,
		Desired:   desired,
		Live:      live,
		Cause:     model.CauseUnknown,
	})
}

// isVacuous: null, a zero scalar, an empty list, or an object holding only
// vacuous values (a template's "metadata: {creationTimestamp: null}").
func isVacuous(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, c := range x {
			if !isVacuous(c) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	return IsZeroScalar(v)
}

// IsZeroScalar says whether v is false, 0 or "": the zero an omitempty
// field's JSON leaves out, so the API server drops it (an int or int32
// holds it in an object converted from a typed one).
func IsZeroScalar(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case bool:
		return !x
	case int64:
		return x == 0
	case int32:
		return x == 0
	case int:
		return x == 0
	case float64:
		return x == 0
	}
	return false
}

func isEmptyContainer(v any) bool {
	switch c := v.(type) {
	case map[string]any:
		return len(c) == 0
	case []any:
		return len(c) == 0
	}
	return false
}

// equalScalar compares two non-container values (or a container with a
// value of another type). Numbers compare by value; quantities
// (resources requests/limits and the like) by amount.
func (c *differ) equalScalar(d, l any, lTok []string) bool {
	if equalJSON(d, l) {
		return true
	}
	if isIntOrStringPath(lTok) && equalIntOrString(d, l) {
		return true
	}
	if c.builtin && isQuantityPath(lTok) {
		dq, ok1 := asQuantity(d)
		lq, ok2 := asQuantity(l)
		if ok1 && ok2 {
			return dq.Cmp(lq) == 0
		}
	}
	if c.secret && len(lTok) == 2 && lTok[0] == "data" {
		ds, ok1 := d.(string)
		ls, ok2 := l.(string)
		if ok1 && ok2 {
			db, err1 := base64.StdEncoding.DecodeString(ds)
			lb, err2 := base64.StdEncoding.DecodeString(ls)
			return err1 == nil && err2 == nil && bytes.Equal(db, lb)
		}
	}
	return false
}

// EqualJSON compares decoded JSON values, numbers by value (an object the
// API machinery decodes holds int64, encoding/json a float64).
func EqualJSON(a, b any) bool { return equalJSON(a, b) }

func equalJSON(a, b any) bool {
	switch av := a.(type) {
	case int64:
		switch bv := b.(type) {
		case int64:
			return av == bv
		case float64:
			return float64(av) == bv
		}
		return false
	case float64:
		switch bv := b.(type) {
		case int64:
			return av == float64(bv)
		case float64:
			return av == bv
		}
		return false
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case nil:
		return b == nil
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, has := bv[k]
			if !has || !equalJSON(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !equalJSON(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// isIntOrStringPath reports fields of type intstr.IntOrString in the core
// API (k8s.io/apimachinery/pkg/util/intstr): rolling update surge and
// unavailability, PodDisruptionBudget bounds, Service targetPort and probe
// ports.
func isIntOrStringPath(tok []string) bool {
	if len(tok) == 0 {
		return false
	}
	switch tok[len(tok)-1] {
	case "maxSurge", "maxUnavailable", "minAvailable", "targetPort", "partition":
		return true
	case "port":
		if len(tok) >= 2 {
			switch tok[len(tok)-2] {
			case "httpGet", "tcpSocket":
				return true
			}
		}
	}
	return false
}

// equalIntOrString: 1 and "1" are the same amount; "25%" only equals "25%".
func equalIntOrString(d, l any) bool {
	ds, dIsStr := d.(string)
	ls, lIsStr := l.(string)
	switch {
	case dIsStr && !lIsStr:
		n, err := strconv.ParseInt(ds, 10, 64)
		return err == nil && equalJSON(n, l)
	case lIsStr && !dIsStr:
		n, err := strconv.ParseInt(ls, 10, 64)
		return err == nil && equalJSON(d, n)
	}
	return false
}

// IsBuiltinGroup says whether an API group is one of Kubernetes' own (the
// core group, a group without a dot, *.k8s.io): the API server decodes
// their objects into Go types (so quantities are canonical: 0.1 and 100m
// are one value) and their kinds follow the API's naming conventions.
// Custom resources keep what was written: for them "0.1" and "100m"
// differ, for the API server and for Argo CD (unless knownTypeFields says
// otherwise, which its adapter judges).
func IsBuiltinGroup(g string) bool {
	return g == "" || !strings.Contains(g, ".") || strings.HasSuffix(g, ".k8s.io")
}

// isQuantityPath reports fields whose values are resource.Quantity in the
// core API: container/pod resources, ResourceQuota hard, LimitRange items,
// pod overhead, emptyDir sizeLimit, PVC storage.
func isQuantityPath(tok []string) bool {
	if len(tok) < 2 {
		return false
	}
	switch tok[len(tok)-2] {
	case "requests", "limits", "hard", "overhead", "max", "min", "default", "defaultRequest", "maxLimitRequestRatio", "capacity":
		return true
	}
	switch tok[len(tok)-1] {
	case "sizeLimit", "storage":
		return true
	}
	return false
}

func asQuantity(v any) (resource.Quantity, bool) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}

func isSecret(o *unstructured.Unstructured) bool {
	if o == nil || o.Object == nil {
		return false
	}
	return o.GetKind() == "Secret" && o.GetAPIVersion() == "v1"
}

// secretToData folds stringData into data as the API server does on write
// (k8s.io/kubernetes/pkg/apis/core/v1/conversion.go: stringData is merged
// into data, stringData wins), so a manifest's stringData compares with the
// live data it became.
func secretToData(d map[string]any) {
	sd, ok := d["stringData"].(map[string]any)
	if !ok {
		delete(d, "stringData")
		return
	}
	data, _ := d["data"].(map[string]any)
	merged := make(map[string]any, len(data)+len(sd))
	for k, v := range data {
		merged[k] = v
	}
	for k, v := range sd {
		s, ok := v.(string)
		if !ok {
			s = fmt.Sprint(v)
		}
		merged[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	d["data"] = merged
	delete(d, "stringData")
}

// stripServerFields drops what the API server, kubectl and controllers write
// and no desired state sets: status, server-populated metadata, kubectl's
// last-applied annotation and the Deployment controller's revision.
func stripServerFields(d, l map[string]any, keepStatus bool) {
	serverMetadata := []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}
	serverAnnotations := []string{managedfields.LastAppliedAnnotation, "deployment.kubernetes.io/revision"}
	for _, m := range []map[string]any{d, l} {
		if !keepStatus {
			delete(m, "status")
		}
		md, ok := m["metadata"].(map[string]any)
		if !ok {
			continue
		}
		for _, f := range serverMetadata {
			delete(md, f)
		}
		if ann, ok := md["annotations"].(map[string]any); ok {
			for _, a := range serverAnnotations {
				delete(ann, a)
			}
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
	}
	// A manifest without a namespace takes it from the context at apply time.
	dmd, _ := d["metadata"].(map[string]any)
	if ns, _ := dmd["namespace"].(string); ns == "" {
		if lmd, ok := l["metadata"].(map[string]any); ok {
			delete(lmd, "namespace")
		}
	}
}

// working returns the differ's view of obj: values in canonical types
// (canonical), sharing every part of obj that already is, with fresh copies
// of the maps the differ edits (the top level, metadata and its
// annotations: stripServerFields, secretToData). A full deep copy of both
// objects was most of explain's memory on large objects; the input is
// still never mutated.
func working(obj map[string]any) (map[string]any, error) {
	v, _, err := canonical(obj, 0)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	m = maps.Clone(m)
	if md, ok := m["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		if ann, ok := md["annotations"].(map[string]any); ok {
			md["annotations"] = maps.Clone(ann)
		}
		m["metadata"] = md
	}
	return m, nil
}

// canonical brings a JSON-like value to map[string]any/[]any/int64/float64/
// string/bool/nil without copying what needs no change: it returns v itself
// (changed false) when v and everything below it already hold canonical
// types, and copies only the maps and lists on the way to a converted
// number, so the inputs are never mutated.
func canonical(v any, depth int) (any, bool, error) {
	if depth > maxDepth {
		return nil, false, fmt.Errorf("object nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil, string, bool, int64, float64:
		return x, false, nil
	case map[string]any:
		var out map[string]any
		for k, c := range x {
			n, changed, err := canonical(c, depth+1)
			if err != nil {
				return nil, false, err
			}
			if changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = n
			}
		}
		if out == nil {
			return x, false, nil
		}
		return out, true, nil
	case []any:
		var out []any
		for i, c := range x {
			n, changed, err := canonical(c, depth+1)
			if err != nil {
				return nil, false, err
			}
			if changed {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = n
			}
		}
		if out == nil {
			return x, false, nil
		}
		return out, true, nil
	}
	n, err := scalar(v)
	return n, err == nil, err
}

// maxDepth bounds recursion on hostile input; real objects are far shallower.
const maxDepth = 1000

// scalar converts a number decoded by another library (int, int32,
// uint32, float32, json.Number) to int64 or float64, so that values compare
// alike; canonical handles maps, lists and the canonical types itself.
func scalar(v any) (any, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case float32:
		return float64(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("bad number %q", x)
		}
		return f, nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}
