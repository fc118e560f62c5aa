// Package source loads desired state: Kubernetes manifests from files,
// directories and stdin (multi-document YAML or JSON, List kinds flattened),
// and kustomizations built the way kubectl -k and Flux build them. Every
// document keeps its file and line so that findings can point at it.
//
// Input is untrusted: malformed YAML, alias bombs, huge files and
// non-object documents are clear errors carrying file:line, never panics.
package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// Document is one Kubernetes object read from a file.
type Document struct {
	Object *unstructured.Unstructured
	// File is the path it was read from, "-" for stdin.
	File string
	// Line is the 1-based line where the object starts (0 when unknown,
	// e.g. for kustomize output).
	Line int
	// Index is the 0-based index of the YAML document in its file; the
	// items of a List share their List's index (Line tells them apart).
	Index int
	// Node is the parsed YAML of the object, for positions; nil when the
	// object did not come from a file.
	Node *yaml.Node
}

// WithObject returns the documents that hold an object, in order. The
// loaders never return one without; documents built by hand (tests, a
// caller's own inputs) may lack it, and every reader of documents skips
// those.
func WithObject(docs []Document) []Document {
	out := make([]Document, 0, len(docs))
	for _, d := range docs {
		if d.Object != nil {
			out = append(out, d)
		}
	}
	return out
}

// Position returns the line and column of the field at pointer (RFC 6901)
// in the file: the key of a mapping entry, the item of a sequence. When the
// field is absent (or the pointer invalid) it returns the document's start
// line and column 0.
func (d Document) Position(pointer string) (line, col int) {
	n := d.Node
	tokens, err := jsonpointer.Parse(pointer)
	if n == nil || err != nil {
		return d.Line, 0
	}
	line, col = n.Line, n.Column
	for _, tok := range tokens {
		n = deref(n)
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok {
					line, col = n.Content[i].Line, n.Content[i].Column
					next = n.Content[i+1]
					break
				}
			}
			if next == nil {
				return d.Line, 0
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.Content) {
				return d.Line, 0
			}
			n = n.Content[i]
			line, col = n.Line, n.Column
		default:
			return d.Line, 0
		}
	}
	return line, col
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// DocumentError is a document (or file) that could not be loaded. Loaders
// return the documents they could read together with these errors (joined),
// so that a caller can report and skip them (compare, audit) or fail
// (explain).
type DocumentError struct {
	File string
	// Line is 1-based; 0 when the error is about the whole file.
	Line int
	Err  error
}

func (e *DocumentError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *DocumentError) Unwrap() error { return e.Err }

// DocumentErrors extracts every *DocumentError from an error returned by a
// loader (which joins them).
func DocumentErrors(err error) []*DocumentError {
	var out []*DocumentError
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		var de *DocumentError
		// Identity, not errors.Is: a DocumentError is collected where it
		// is, and the errors wrapping one are walked into.
		if errors.As(e, &de) && de == e { //nolint:errorlint // identity, see above
			out = append(out, de)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		if errors.As(e, &de) {
			out = append(out, de)
		}
	}
	walk(err)
	return out
}

// ErrAliasBomb is wrapped by the error for a document whose aliases expand
// to more nodes than any manifest needs ("billion laughs").
var ErrAliasBomb = errors.New("YAML aliases expand too much (alias bomb?)")

const (
	// maxAliasNodes bounds the nodes built by expanding aliases in one
	// document. go.yaml.in/yaml/v3 guards its own decoder with a ratio
	// (decode.go allowedAliasRatio); we build values from yaml.Node
	// ourselves, so we bound expansion ourselves. Real manifests reuse a
	// handful of anchors; a billion-laughs document hits this in
	// milliseconds with a few MB allocated.
	maxAliasNodes = 100_000
	// maxDepth bounds nesting; the yaml parser already stops at 10000.
	maxDepth = 10_000
	// maxErrorsPerFile stops reading a file that is not manifests at all
	// (a log, a million "a: b" documents) before the errors drown the output.
	maxErrorsPerFile = 20
)

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Decode reads every document of one YAML or JSON stream. file names the
// stream in positions and errors. Good documents are returned even when
// others fail; the error joins one *DocumentError per failure. A syntax
// error ends the stream (the parser cannot resynchronise).
func Decode(data []byte, file string) ([]Document, error) {
	docs, err := decode(data, file)
	if err == nil || !bareStar.Match(data) {
		return docs, err
	}
	// An unquoted `group: *` (or `kind: *`) is a YAML alias without a
	// name, a syntax error that ends the stream and loses every rule after
	// it. Read the file again with the stars quoted, as the author meant,
	// and report each one with the fix.
	fixed := bareStar.ReplaceAll(data, []byte("${1}'*'${2}"))
	docs, err2 := decode(fixed, file)
	var errs []error
	for _, m := range bareStar.FindAllIndex(data, -1) {
		line := bytes.Count(data[:m[0]], []byte("\n")) + 1
		errs = append(errs, &DocumentError{File: file, Line: line,
			Err: errors.New("invalid YAML: an unquoted * is a YAML alias: quote it: '*' (read as '*')")})
	}
	return docs, errors.Join(append(errs, err2)...)
}

// bareStar finds a mapping value or list item that is a lone unquoted *.
var bareStar = regexp.MustCompile(`(?m)^(\s*(?:- )?(?:[\w.-]+:\s+|- ))\*(\s*(?:#.*)?)$`)

func decode(data []byte, file string) ([]Document, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []Document
	var errs []error
	for index := 0; ; index++ {
		var root yaml.Node
		err := dec.Decode(&root)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, syntaxError(file, err))
			break
		}
		if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
			continue
		}
		n := root.Content[0]
		got, err := decodeDocument(n, file, index)
		if err != nil {
			errs = append(errs, err)
			if len(errs) >= maxErrorsPerFile {
				errs = append(errs, &DocumentError{File: file, Line: n.Line, Err: fmt.Errorf("%d bad documents: stopped reading the file", len(errs))})
				break
			}
		}
		docs = append(docs, got...)
	}
	return docs, errors.Join(errs...)
}

func syntaxError(file string, err error) *DocumentError {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &DocumentError{File: file, Line: line, Err: errors.New("invalid YAML: " + m[2])}
	}
	return &DocumentError{File: file, Err: errors.New("invalid YAML: " + strings.TrimPrefix(msg, "yaml: "))}
}

// DecodeObjects is Decode for objects that are compared, not cited: no
// Document keeps its YAML nodes (Node is nil, Line is set), and a JSON
// stream is decoded as JSON, without building a YAML node tree at all.
func DecodeObjects(data []byte, file string) ([]Document, error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return decodeJSON(data, file)
	}
	docs, err := Decode(data, file)
	for i := range docs {
		docs[i].Node = nil
	}
	return docs, err
}

// decodeJSON reads a stream of JSON objects. Numbers become int64 when
// integral and float64 otherwise, as in unstructured objects.
func decodeJSON(data []byte, file string) ([]Document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var docs []Document
	var errs []error
	for index := 0; ; index++ {
		start := dec.InputOffset()
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		line := lineAt(data, start)
		if err != nil {
			errs = append(errs, &DocumentError{File: file, Line: line, Err: fmt.Errorf("invalid JSON: %w", err)})
			break
		}
		got, err := documentsOf(jsonNumbers(v), file, line, index, nil)
		docs = append(docs, got...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return docs, errors.Join(errs...)
}

// lineAt is the 1-based line of the first non-space byte at or after off.
func lineAt(data []byte, off int64) int {
	for off < int64(len(data)) && (data[off] == ' ' || data[off] == '\t' || data[off] == '\r' || data[off] == '\n') {
		off++
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

func jsonNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonNumbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = jsonNumbers(x)
		}
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if f, err := t.Float64(); err == nil {
			return f
		}
		return t.String()
	}
	return v
}

func decodeDocument(n *yaml.Node, file string, index int) ([]Document, error) {
	conv := converter{anchors: map[*yaml.Node]bool{}}
	v, err := conv.value(n, 0)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			return nil, &DocumentError{File: file, Line: pe.line, Err: pe.err}
		}
		return nil, &DocumentError{File: file, Line: n.Line, Err: err}
	}
	return documentsOf(v, file, n.Line, index, n)
}

// documentsOf turns one decoded document into Documents: the object, or
// the items of a List. n is its YAML node, nil when positions are not
// kept.
func documentsOf(v any, file string, line, index int, n *yaml.Node) ([]Document, error) {
	docErr := func(line int, err error) error { return &DocumentError{File: file, Line: line, Err: err} }
	if v == nil {
		return nil, nil // "---\nnull" or a document of comments only
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, docErr(line, fmt.Errorf("document is a %s, not a Kubernetes object", model.ValueKind(v, "mapping", "sequence")))
	}
	if err := checkObject(m); err != nil {
		return nil, docErr(line, err)
	}
	obj := &unstructured.Unstructured{Object: m}
	if !isList(obj) {
		return []Document{{Object: obj, File: file, Line: line, Index: index, Node: n}}, nil
	}
	// A List (v1 List, DeploymentList...) stands for its items, as kubectl
	// apply -f treats it (k8s.io/cli-runtime/pkg/resource/visitor.go FlattenListVisitor).
	items, _ := m["items"].([]any)
	var itemNodes []*yaml.Node
	if n != nil {
		itemNodes = listItemNodes(n)
	}
	var docs []Document
	var errs []error
	for i, it := range items {
		line, node := line, (*yaml.Node)(nil)
		if i < len(itemNodes) {
			node = itemNodes[i]
			line = node.Line
		}
		im, ok := it.(map[string]any)
		if !ok {
			errs = append(errs, docErr(line, fmt.Errorf("items[%d] is a %s, not a Kubernetes object", i, model.ValueKind(it, "mapping", "sequence"))))
			continue
		}
		if err := checkObject(im); err != nil {
			errs = append(errs, docErr(line, fmt.Errorf("items[%d]: %w", i, err)))
			continue
		}
		docs = append(docs, Document{Object: &unstructured.Unstructured{Object: im}, File: file, Line: line, Index: index, Node: node})
	}
	return docs, errors.Join(errs...)
}

func isList(obj *unstructured.Unstructured) bool {
	if !strings.HasSuffix(obj.GetKind(), "List") {
		return false
	}
	_, ok := obj.Object["items"].([]any)
	return ok
}

func listItemNodes(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "items" {
			if s := deref(n.Content[i+1]); s.Kind == yaml.SequenceNode {
				return s.Content
			}
		}
	}
	return nil
}

func checkObject(m map[string]any) error {
	av, _ := m["apiVersion"].(string)
	k, _ := m["kind"].(string)
	switch {
	case av == "" && k == "":
		return errors.New("not a Kubernetes object: apiVersion and kind are missing")
	case av == "":
		return fmt.Errorf("%s without apiVersion", k)
	case k == "":
		return fmt.Errorf("object of %s without kind", av)
	}
	if md, ok := m["metadata"]; ok && md != nil {
		if _, ok := md.(map[string]any); !ok {
			return fmt.Errorf("metadata is a %s, not an object", model.ValueKind(md, "mapping", "sequence"))
		}
	}
	return nil
}

// posError carries the line of the node a conversion error is about.
type posError struct {
	line int
	err  error
}

func (e *posError) Error() string { return e.err.Error() }
func (e *posError) Unwrap() error { return e.err }

// converter builds JSON-compatible values (map[string]any, []any, string,
// int64, float64, bool, nil) from a yaml.Node tree, the form
// unstructured.Unstructured holds, expanding aliases under a budget.
type converter struct {
	// anchors holds anchored nodes being converted, to refuse an alias to
	// its own ancestor (which would expand for ever).
	anchors map[*yaml.Node]bool
	// aliasDepth > 0 while converting the target of an alias.
	aliasDepth int
	expanded   int
}

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	return &posError{line: n.Line, err: fmt.Errorf(format, args...)}
}

func (c *converter) value(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, c.fail(n, "nested deeper than %d levels", maxDepth)
	}
	if c.aliasDepth > 0 {
		c.expanded++
		if c.expanded > maxAliasNodes {
			return nil, &posError{line: n.Line, err: fmt.Errorf("%w: more than %d nodes from aliases", ErrAliasBomb, maxAliasNodes)}
		}
	}
	if n.Anchor != "" {
		if c.anchors[n] {
			return nil, c.fail(n, "anchor %q refers to itself", n.Anchor)
		}
		c.anchors[n] = true
		defer delete(c.anchors, n)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, c.fail(n, "unknown anchor %q", n.Value)
		}
		if c.anchors[n.Alias] {
			return nil, c.fail(n, "anchor %q refers to itself", n.Value)
		}
		c.aliasDepth++
		defer func() { c.aliasDepth-- }()
		return c.value(n.Alias, depth+1)
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := c.value(item, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return c.mapping(n, depth)
	}
	return nil, c.fail(n, "unsupported YAML node")
}

func (c *converter) mapping(n *yaml.Node, depth int) (any, error) {
	out := make(map[string]any, len(n.Content)/2)
	lines := make(map[string]int, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, vn := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, vn)
			continue
		}
		key, err := c.key(k)
		if err != nil {
			return nil, err
		}
		if first, dup := lines[key]; dup {
			return nil, c.fail(k, "duplicate key %q (first at line %d)", key, first)
		}
		lines[key] = k.Line
		v, err := c.value(vn, depth+1)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	// YAML merge keys (<<): explicit keys win, earlier merged maps win over
	// later ones (https://yaml.org/type/merge.html).
	for _, mn := range merges {
		sources := []*yaml.Node{mn}
		if d := deref(mn); d.Kind == yaml.SequenceNode {
			sources = d.Content
		}
		for _, s := range sources {
			v, err := c.value(s, depth+1)
			if err != nil {
				return nil, err
			}
			m, ok := v.(map[string]any)
			if !ok {
				return nil, c.fail(s, "merge key (<<) needs a mapping, got a %s", model.ValueKind(v, "mapping", "sequence"))
			}
			for k, x := range m {
				if _, has := out[k]; !has {
					out[k] = x
				}
			}
		}
	}
	return out, nil
}

// key renders a mapping key as a string, as sigs.k8s.io/yaml's YAMLToJSON
// does for non-string scalar keys (true -> "true", 0x10 -> "16").
func (c *converter) key(k *yaml.Node) (string, error) {
	k = deref(k)
	if k.Kind != yaml.ScalarNode {
		return "", c.fail(k, "mapping key must be a scalar")
	}
	if k.ShortTag() == "!!str" {
		return k.Value, nil
	}
	v, err := scalar(k)
	if err != nil {
		return "", err
	}
	if v == nil {
		return "null", nil
	}
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	}
	return fmt.Sprint(v), nil
}

func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, &posError{line: n.Line, err: fmt.Errorf("invalid boolean %q", n.Value)}
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err == nil {
			return f, nil
		}
		return nil, &posError{line: n.Line, err: fmt.Errorf("invalid integer %q", n.Value)}
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, &posError{line: n.Line, err: fmt.Errorf("invalid number %q", n.Value)}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, &posError{line: n.Line, err: fmt.Errorf("number %q cannot be represented in JSON", n.Value)}
		}
		return f, nil
	}
	// !!str, !!timestamp and !!binary stay the text they were written as
	// (a timestamp is an RFC 3339 string in the API; binary is base64, as
	// Secret data wants it); unknown tags too.
	return n.Value, nil
}
