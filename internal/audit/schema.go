package audit

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// A JSON pointer that names a field the target kind cannot have, or a list
// without an item index (/spec/containers/resources/limits on a Pod), is
// skipped by both engines: Flux's jsondiff removes nothing, Argo CD's
// jsonpointer finds nothing. The rule then hides nothing and the drift it
// was meant to hide is reported. Built-in kinds are checked against the Go
// API types of k8s.io/api (the types the OpenAPI is generated from, as
// registered in client-go's scheme), custom kinds against the
// openAPIV3Schema of their CRD when the CRD is in the tree.

// schemaNode walks one level of a schema.
type schemaNode interface {
	// child returns the schema of field tok, or why tok cannot exist
	// (ok false). A nil node with ok true accepts anything below.
	child(tok string) (next schemaNode, why string, ok bool)
}

// pathProblem returns why tokens can never match an object of one of the
// kinds, or "" when they can on at least one (or nothing is known).
func (a *analysis) pathProblem(kind string, gkOK func(group, kind string) bool, tokens []string) string {
	roots := a.schemasFor(kind, gkOK)
	if len(roots) == 0 {
		return ""
	}
	var why string
	for _, root := range roots {
		w := walkSchema(root, tokens)
		if w == "" {
			return ""
		}
		if why == "" {
			why = w
		}
	}
	return why
}

func walkSchema(n schemaNode, tokens []string) string {
	for i, tok := range tokens {
		if n == nil {
			return ""
		}
		next, why, ok := n.child(tok)
		if !ok {
			if i == 0 {
				return why
			}
			return fmt.Sprintf("%s %s", renderTokens(tokens[:i]), why)
		}
		n = next
	}
	return ""
}

// schemaCand is one kind's schema.
type schemaCand struct {
	gk schema.GroupKind
	n  schemaNode
}

// schemasFor returns the schemas of the kinds the selector can target:
// built-in types of any group it accepts, and CRDs of the tree.
func (a *analysis) schemasFor(kind string, gkOK func(group, kind string) bool) []schemaNode {
	if a.schemaCache == nil {
		a.schemaCache = map[string][]schemaCand{}
	}
	cands, ok := a.schemaCache[kind]
	if !ok {
		cands = a.schemaCandidates(kind)
		a.schemaCache[kind] = cands
	}
	var out []schemaNode
	for _, c := range cands {
		if gkOK(c.gk.Group, c.gk.Kind) {
			out = append(out, c.n)
		}
	}
	return out
}

func (a *analysis) schemaCandidates(kind string) []schemaCand {
	var cands []schemaCand
	types := scheme.Scheme.AllKnownTypes()
	var gvks []schema.GroupVersionKind
	for gvk := range types {
		if gvk.Kind == kind && gvk.Version != "__internal" {
			gvks = append(gvks, gvk)
		}
	}
	sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })
	seen := map[schema.GroupKind]bool{}
	for _, gvk := range gvks {
		gk := gvk.GroupKind()
		if seen[gk] {
			continue
		}
		seen[gk] = true
		cands = append(cands, schemaCand{gk, typeNode{types[gvk]}})
	}
	for _, d := range a.ix.docs {
		u := d.Object
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		spec, _ := u.Object["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		if k, _ := names["kind"].(string); k != kind {
			continue
		}
		group, _ := spec["group"].(string)
		vers, _ := spec["versions"].([]any)
		for _, v := range vers {
			vm, _ := v.(map[string]any)
			sch, _ := vm["schema"].(map[string]any)
			if root, ok := sch["openAPIV3Schema"].(map[string]any); ok {
				cands = append(cands, schemaCand{schema.GroupKind{Group: group, Kind: kind}, jsonSchemaNode(root)})
			}
		}
	}
	return cands
}

// builtinKinds lists the group and kind of every built-in type (client-go's
// scheme: the k8s.io/api types), once.
var builtinKinds = sync.OnceValue(func() []schema.GroupKind {
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupKind
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gk := gvk.GroupKind(); gvk.Version != "__internal" && !seen[gk] {
			seen[gk] = true
			out = append(out, gk)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
})

// crdKind returns the group and kind a CustomResourceDefinition defines.
func crdKind(obj map[string]any) (schema.GroupKind, bool) {
	if obj["kind"] != "CustomResourceDefinition" {
		return schema.GroupKind{}, false
	}
	spec, _ := obj["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	group, _ := spec["group"].(string)
	kind, _ := names["kind"].(string)
	return schema.GroupKind{Group: group, Kind: kind}, kind != ""
}

// neverMatches says which JSON pointer of r can never exist on the kind
// it targets, or "".
func (a *analysis) neverMatches(r *ruleInfo) string {
	kind := r.m.literalKind
	if kind == "" || r.m.gk == nil {
		return ""
	}
	for _, p := range r.JSONPointers {
		tokens, err := parsePointer(p)
		if err != nil || len(tokens) == 0 {
			continue
		}
		if why := a.pathProblem(kind, r.m.matchesGK, tokens); why != "" {
			return fmt.Sprintf("path %s can never match a %s: %s", p, kind, why)
		}
	}
	return ""
}

// typeNode is a Go API type: struct fields by json name, slices by index,
// maps by any key.
type typeNode struct{ t reflect.Type }

// opaqueType: types that serialise as scalars or free-form JSON.
func opaqueType(name string) bool {
	switch name {
	case "resource.Quantity", "intstr.IntOrString", "v1.Time", "v1.MicroTime",
		"runtime.RawExtension", "v1.JSON", "v1.Duration", "v1.FieldsV1":
		return true
	}
	return false
}

func (n typeNode) child(tok string) (schemaNode, string, bool) {
	t := n.t
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if opaqueType(t.String()) {
		return nil, "", true
	}
	switch t.Kind() {
	case reflect.Struct:
		if f, ok := jsonField(t, tok); ok {
			return typeNode{f}, "", true
		}
		return nil, fmt.Sprintf("%s has no field %q", t.Name(), tok), false
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, "is a string (bytes), it has no fields", false
		}
		if _, err := strconv.Atoi(tok); err != nil {
			return nil, fmt.Sprintf("is a list: name an item by index (…/0/%s), %q is not one", tok, tok), false
		}
		return typeNode{t.Elem()}, "", true
	case reflect.Map:
		return typeNode{t.Elem()}, "", true
	case reflect.Interface:
		return nil, "", true
	}
	return nil, fmt.Sprintf("is a %s, it has no field %q", t.Kind(), tok), false
}

// jsonField finds the field serialised as name, through inlined structs.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		jn, opts, _ := strings.Cut(tag, ",")
		if jn == "-" {
			continue
		}
		if f.Anonymous && jn == "" || strings.Contains(opts, "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if r, ok := jsonField(ft, name); ok {
					return r, true
				}
			}
			continue
		}
		if jn == "" {
			jn = f.Name
		}
		if jn == name {
			return f.Type, true
		}
	}
	return nil, false
}

// jsonSchemaNode is a CRD's structural schema.
type jsonSchemaNode map[string]any

func (n jsonSchemaNode) child(tok string) (schemaNode, string, bool) {
	if b, _ := n["x-kubernetes-preserve-unknown-fields"].(bool); b {
		return nil, "", true
	}
	if b, _ := n["x-kubernetes-int-or-string"].(bool); b {
		return nil, "is an int or string, it has no fields", false
	}
	typ, _ := n["type"].(string)
	switch typ {
	case "array":
		if _, err := strconv.Atoi(tok); err != nil {
			return nil, fmt.Sprintf("is a list: name an item by index (…/0/%s), %q is not one", tok, tok), false
		}
		items, _ := n["items"].(map[string]any)
		if items == nil {
			return nil, "", true
		}
		return jsonSchemaNode(items), "", true
	case "object", "":
		props, _ := n["properties"].(map[string]any)
		if p, ok := props[tok].(map[string]any); ok {
			return jsonSchemaNode(p), "", true
		}
		switch ap := n["additionalProperties"].(type) {
		case map[string]any:
			return jsonSchemaNode(ap), "", true
		case bool:
			if ap {
				return nil, "", true
			}
		}
		if len(props) == 0 {
			return nil, "", true // free-form object (metadata in most CRDs)
		}
		return nil, fmt.Sprintf("has no field %q in its schema", tok), false
	}
	return nil, fmt.Sprintf("is a %s, it has no field %q", typ, tok), false
}
