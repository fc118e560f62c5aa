package adopt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// Object names the document to edit in a (multi-document) file. Group is
// the API group ("" for core); Namespace "" matches a document without one.
type Object struct {
	Group, Kind, Namespace, Name string
}

func (o Object) String() string {
	k := o.Kind
	if o.Group != "" {
		k += "." + o.Group
	}
	if o.Namespace == "" {
		return k + " " + o.Name
	}
	return k + " " + o.Namespace + "/" + o.Name
}

// Change is one field to write into the file.
type Change struct {
	// Pointer is the RFC 6901 pointer of the field in the live object:
	// list items by their live index, matched into the file by merge key.
	Pointer string
	// Value is the live JSON value (string, int64, float64, bool, nil,
	// map[string]any, []any).
	Value any
	// Remove deletes the field from the file (the live object lacks it).
	Remove bool
}

// Options tell how to match list items.
type Options struct {
	// Live is the live object (JSON form). A list index in a pointer is a
	// live index: the live item's merge keys find its twin in the file,
	// which may hold the items in another order.
	Live map[string]any
	// ListKeys returns the merge keys of the list at the pointer tokens
	// (e.g. ["name"] for .spec.template.spec.containers), nil when items
	// have no keys (atomic lists go by index).
	ListKeys func(tokens []string) []string
	// KeyDefaults returns values the API server defaults into key fields
	// (a port's protocol is TCP), so a file item without one still matches.
	KeyDefaults func(tokens []string) map[string]any
}

// Reason classifies why a change could not be written.
type Reason string

// Reasons an edit is refused.
const (
	ReasonNotFound     Reason = "not-found"
	ReasonTemplate     Reason = "template"
	ReasonShared       Reason = "shared"
	ReasonTypeMismatch Reason = "type-mismatch"
	ReasonUnsupported  Reason = "unsupported"
	ReasonSecret       Reason = "secret"
)

// EditError is a change that could not be written safely; the caller
// prints Value for the user to write by hand where Reason allows.
type EditError struct {
	Pointer string
	Reason  Reason
	Msg     string
}

func (e *EditError) Error() string {
	return e.Pointer + ": " + e.Msg
}

func editErr(p string, r Reason, format string, args ...any) error {
	return &EditError{Pointer: p, Reason: r, Msg: fmt.Sprintf(format, args...)}
}

// doc is one parsed document of a file.
type doc struct {
	node  *yaml.Node // the DocumentNode
	value any        // decoded, JSON-normalised
}

func parseDocs(data []byte) ([]doc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []doc
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		nv, err := normalize(v)
		if err != nil {
			return nil, err
		}
		out = append(out, doc{node: &n, value: nv})
	}
}

// normalize turns decoded YAML into its JSON form (float64 numbers,
// map[string]any), the form values are compared in.
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

func isObject(v any, o Object) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	av, _ := m["apiVersion"].(string)
	group := ""
	if g, _, ok := strings.Cut(av, "/"); ok {
		group = g
	}
	kind, _ := m["kind"].(string)
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	return group == o.Group && kind == o.Kind && name == o.Name && (ns == "" || o.Namespace == "" || ns == o.Namespace)
}

// FindDocument returns the index of the document that is obj, -1 if none.
func FindDocument(data []byte, obj Object) (int, error) {
	docs, err := parseDocs(data)
	if err != nil {
		return -1, err
	}
	for i, d := range docs {
		if isObject(d.value, obj) {
			return i, nil
		}
	}
	return -1, nil
}

// EditDocument writes changes into the document that is obj and returns
// the new file content; every byte outside the edited values is kept.
func EditDocument(data []byte, obj Object, changes []Change, opts Options) ([]byte, error) {
	docs, err := parseDocs(data)
	if err != nil {
		return nil, err
	}
	idx := -1
	for i, d := range docs {
		if isObject(d.value, obj) {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("no document is %s", obj)
	}
	return EditAt(data, idx, changes, opts)
}

// EditAt edits document number idx of data (0-based). A Helm values file
// is edited the same way: its pointers are values paths.
func EditAt(data []byte, idx int, changes []Change, opts Options) ([]byte, error) {
	docs, err := parseDocs(data)
	if err != nil {
		return nil, err
	}
	if idx < 0 || idx >= len(docs) {
		return nil, fmt.Errorf("no document %d", idx)
	}
	want := make([]any, len(docs))
	for i, d := range docs {
		want[i] = d.value
	}
	out := data
	for _, c := range changes {
		var fileTokens []string
		out, fileTokens, err = editOne(out, idx, c, opts)
		if err != nil {
			return nil, err
		}
		want[idx], err = setPath(want[idx], fileTokens, c)
		if err != nil {
			return nil, editErr(c.Pointer, ReasonUnsupported, "%v", err)
		}
	}
	// The proof: the new bytes decode to the old documents with exactly the
	// changes made, the others untouched.
	got, err := parseDocs(out)
	if err != nil {
		return nil, fmt.Errorf("the edit would break the YAML (%w): refused", err)
	}
	if len(got) != len(docs) {
		return nil, fmt.Errorf("the edit would change the number of documents: refused")
	}
	for i := range got {
		w, err := normalize(want[i])
		if err != nil {
			return nil, err
		}
		if !reflect.DeepEqual(got[i].value, w) {
			return nil, fmt.Errorf("the edit of document %d would change more than the adopted fields: refused", i+1)
		}
	}
	return out, nil
}

// setPath applies a change to a JSON value by file tokens (list indices
// are the file's).
func setPath(v any, tokens []string, c Change) (any, error) {
	if len(tokens) == 0 {
		if c.Remove {
			return nil, errors.New("cannot remove the document")
		}
		return c.Value, nil
	}
	switch t := v.(type) {
	case map[string]any:
		cp := make(map[string]any, len(t)+1)
		for k, x := range t {
			cp[k] = x
		}
		if len(tokens) == 1 && c.Remove {
			delete(cp, tokens[0])
			return cp, nil
		}
		child, ok := cp[tokens[0]]
		if !ok {
			child = map[string]any{}
		}
		nv, err := setPath(child, tokens[1:], c)
		if err != nil {
			return nil, err
		}
		cp[tokens[0]] = nv
		return cp, nil
	case []any:
		i, err := strconv.Atoi(tokens[0])
		if err != nil || i < 0 || i >= len(t) {
			return nil, fmt.Errorf("no list item %s", tokens[0])
		}
		cp := append([]any(nil), t...)
		if len(tokens) == 1 && c.Remove {
			return append(cp[:i], cp[i+1:]...), nil
		}
		nv, err := setPath(cp[i], tokens[1:], c)
		if err != nil {
			return nil, err
		}
		cp[i] = nv
		return cp, nil
	case nil:
		return setPath(map[string]any{}, tokens, c)
	}
	return nil, fmt.Errorf("%s is not a mapping or list", tokens[0])
}

// located is where a pointer lands in the file.
type located struct {
	node    *yaml.Node   // the value node; nil when missing
	key     *yaml.Node   // its key when the parent is a mapping
	parent  *yaml.Node   // the deepest existing mapping when node is nil
	inFlow  bool         // node (or parent) sits inside a flow collection
	rest    []string     // missing tokens below parent
	path    []*yaml.Node // the collections walked through, root first
	fileTok []string     // the pointer in file terms (file list indices)
}

func locate(root *yaml.Node, tokens []string, opts Options, pointer string) (*located, error) {
	cur := root
	var live any = opts.Live
	l := &located{}
	var key *yaml.Node
	for i, tok := range tokens {
		if cur.Kind == yaml.AliasNode {
			return nil, editErr(pointer, ReasonShared, "the value comes through the alias *%s (line %d), shared with every other use of &%s: edit it by hand", cur.Value, cur.Line, cur.Value)
		}
		if cur.Style&yaml.FlowStyle != 0 {
			l.inFlow = true
		}
		l.path = append(l.path, cur)
		switch cur.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for j := 0; j+1 < len(cur.Content); j += 2 {
				if cur.Content[j].Value == tok && cur.Content[j].Kind == yaml.ScalarNode {
					key, next = cur.Content[j], cur.Content[j+1]
				}
			}
			if next == nil {
				for j := 0; j+1 < len(cur.Content); j += 2 {
					if cur.Content[j].Value == "<<" {
						return nil, editErr(pointer, ReasonShared, "the mapping at line %d takes keys from a << merge: edit it by hand", cur.Line)
					}
				}
				l.parent, l.rest = cur, tokens[i:]
				l.fileTok = append(l.fileTok, tokens[i:]...)
				return l, nil
			}
			l.fileTok = append(l.fileTok, tok)
			cur = next
			if m, ok := live.(map[string]any); ok {
				live = m[tok]
			} else {
				live = nil
			}
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(tok)
			if err != nil {
				return nil, editErr(pointer, ReasonNotFound, "%q is not a list index", tok)
			}
			liveList, _ := live.([]any)
			var liveItem any
			if idx >= 0 && idx < len(liveList) {
				liveItem = liveList[idx]
			}
			var keys []string
			var defaults map[string]any
			if opts.ListKeys != nil {
				keys = opts.ListKeys(tokens[:i])
			}
			if opts.KeyDefaults != nil {
				defaults = opts.KeyDefaults(tokens[:i])
			}
			fi := idx
			if opts.Live != nil {
				fi, err = matchItem(cur, liveItem, idx, len(liveList), keys, defaults, pointer)
				if err != nil {
					return nil, err
				}
			} else if idx < 0 || idx >= len(cur.Content) {
				// Without a live object (a values file, a patch value) the
				// index is the file's own.
				return nil, editErr(pointer, ReasonNotFound, "the list at line %d has no item %d", cur.Line, idx)
			}
			key = nil
			l.fileTok = append(l.fileTok, strconv.Itoa(fi))
			cur = cur.Content[fi]
			live = liveItem
		default:
			return nil, editErr(pointer, ReasonUnsupported, "line %d holds a scalar where %s needs a mapping or list", cur.Line, strings.Join(tokens[:i+1], "/"))
		}
	}
	l.node, l.key = cur, key
	return l, nil
}

// matchItem finds the file item that is the live item: by merge keys when
// the list has them, else by index when the lists have the same length.
func matchItem(seq *yaml.Node, liveItem any, liveIdx, liveLen int, keys []string, defaults map[string]any, pointer string) (int, error) {
	lm, isMap := liveItem.(map[string]any)
	if len(keys) > 0 && isMap {
		for fi, it := range seq.Content {
			var v any
			if err := it.Decode(&v); err != nil {
				continue
			}
			fm, ok := v.(map[string]any)
			if !ok {
				continue
			}
			fm, _ = normalizeMap(fm)
			lmn, _ := normalizeMap(lm)
			match := true
			for _, k := range keys {
				fv, ok := fm[k]
				if !ok {
					fv = defaults[k]
				}
				lv, ok := lmn[k]
				if !ok {
					lv = defaults[k]
				}
				if !reflect.DeepEqual(fv, lv) {
					match = false
					break
				}
			}
			if match {
				return fi, nil
			}
		}
		var desc []string
		for _, k := range keys {
			desc = append(desc, fmt.Sprintf("%s=%v", k, lm[k]))
		}
		return 0, editErr(pointer, ReasonNotFound, "the list item [%s] is not in the file (at line %d)", strings.Join(desc, ","), seq.Line)
	}
	if len(seq.Content) != liveLen || liveIdx >= len(seq.Content) {
		return 0, editErr(pointer, ReasonUnsupported, "the list at line %d has no merge key and %d items in the file, %d live: cannot tell which item is which", seq.Line, len(seq.Content), liveLen)
	}
	return liveIdx, nil
}

func normalizeMap(m map[string]any) (map[string]any, error) {
	v, err := normalize(m)
	if err != nil {
		return m, err
	}
	out, _ := v.(map[string]any)
	return out, nil
}

// lineIndex converts yaml.v3 line/column marks (1-based, columns in
// characters) into byte offsets.
type lineIndex struct {
	data   []byte
	starts []int
}

func newLineIndex(data []byte) *lineIndex {
	li := &lineIndex{data: data, starts: []int{0}}
	for i, b := range data {
		if b == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

func (li *lineIndex) offset(line, col int) int {
	if line-1 >= len(li.starts) {
		return len(li.data)
	}
	off := li.starts[line-1]
	for c := 1; c < col && off < len(li.data); c++ {
		_, n := utf8.DecodeRune(li.data[off:])
		off += n
	}
	return off
}

func (li *lineIndex) lineEnd(off int) int {
	if i := bytes.IndexByte(li.data[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(li.data)
}

func (li *lineIndex) lineStart(off int) int {
	return bytes.LastIndexByte(li.data[:off], '\n') + 1
}

// start is the byte offset of a node's value (after its anchor, if any).
func (li *lineIndex) start(n *yaml.Node) int {
	off := li.offset(n.Line, n.Column)
	if n.Anchor != "" && off < len(li.data) && li.data[off] == '&' {
		off += 1 + len(n.Anchor)
		for off < len(li.data) && (li.data[off] == ' ' || li.data[off] == '\t') {
			off++
		}
	}
	return off
}

// end is the byte offset just past a node's text.
func (li *lineIndex) end(n *yaml.Node, inFlow bool) (int, error) {
	s := li.start(n)
	d := li.data
	switch n.Kind {
	case yaml.AliasNode:
		return s + 1 + len(n.Value), nil
	case yaml.MappingNode, yaml.SequenceNode:
		if n.Style&yaml.FlowStyle != 0 {
			return matchClose(d, s)
		}
		if len(n.Content) == 0 {
			return s, nil
		}
		return li.end(n.Content[len(n.Content)-1], false)
	case yaml.ScalarNode:
		switch {
		case n.Style&yaml.DoubleQuotedStyle != 0:
			for i := s + 1; i < len(d); i++ {
				switch d[i] {
				case '\\':
					i++
				case '"':
					return i + 1, nil
				}
			}
		case n.Style&yaml.SingleQuotedStyle != 0:
			for i := s + 1; i < len(d); i++ {
				if d[i] == '\'' {
					if i+1 < len(d) && d[i+1] == '\'' {
						i++
						continue
					}
					return i + 1, nil
				}
			}
		case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			return li.blockEnd(s), nil
		default:
			e := s
			for e < len(d) && d[e] != '\n' {
				if inFlow && (d[e] == ',' || d[e] == ']' || d[e] == '}') {
					break
				}
				if d[e] == '#' && e > s && (d[e-1] == ' ' || d[e-1] == '\t') {
					break
				}
				e++
			}
			for e > s && (d[e-1] == ' ' || d[e-1] == '\t' || d[e-1] == '\r') {
				e--
			}
			if n.Tag != "!!null" || e > s {
				if string(d[s:e]) != n.Value && !strings.HasPrefix(n.Tag, "!!") {
					return 0, fmt.Errorf("line %d: scalar text does not match its value", n.Line)
				}
			}
			return e, nil
		}
		return 0, fmt.Errorf("line %d: unterminated scalar", n.Line)
	}
	return 0, fmt.Errorf("line %d: unexpected node", n.Line)
}

// blockEnd is the end of a block scalar whose indicator is at s: the end
// of its last content line (more indented than the indicator's line).
func (li *lineIndex) blockEnd(s int) int {
	d := li.data
	hdrEnd := li.lineEnd(s)
	parentIndent := indentOf(d, li.lineStart(s))
	end := hdrEnd
	off := hdrEnd + 1
	for off < len(d) {
		le := li.lineEnd(off)
		line := d[off:le]
		if len(bytes.TrimSpace(line)) == 0 {
			off = le + 1
			continue
		}
		if indentOf(d, off) <= parentIndent {
			break
		}
		end = le
		off = le + 1
	}
	if end > len(d) {
		end = len(d)
	}
	return end
}

func indentOf(d []byte, lineStart int) int {
	n := 0
	for lineStart+n < len(d) && d[lineStart+n] == ' ' {
		n++
	}
	return n
}

// matchClose returns the offset past the bracket closing the flow
// collection that opens at s, skipping quoted strings and comments.
func matchClose(d []byte, s int) (int, error) {
	depth := 0
	for i := s; i < len(d); i++ {
		switch d[i] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		case '"':
			for i++; i < len(d) && d[i] != '"'; i++ {
				if d[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(d); i++ {
				if d[i] == '\'' {
					if i+1 < len(d) && d[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case '#':
			if i > 0 && (d[i-1] == ' ' || d[i-1] == '\n') {
				for i < len(d) && d[i] != '\n' {
					i++
				}
			}
		}
	}
	return 0, fmt.Errorf("unclosed flow collection at byte %d", s)
}

func splice(d []byte, s, e int, text string) []byte {
	out := make([]byte, 0, len(d)-(e-s)+len(text))
	out = append(out, d[:s]...)
	out = append(out, text...)
	return append(out, d[e:]...)
}

// editOne applies one change and returns the new bytes and the file
// tokens of the field.
func editOne(data []byte, idx int, c Change, opts Options) ([]byte, []string, error) {
	docs, err := parseDocs(data)
	if err != nil {
		return nil, nil, err
	}
	tokens, err := jsonpointer.Parse(c.Pointer)
	if err != nil {
		return nil, nil, editErr(c.Pointer, ReasonNotFound, "%v", err)
	}
	root := docs[idx].node
	if len(root.Content) == 0 {
		return nil, nil, editErr(c.Pointer, ReasonNotFound, "the document is empty")
	}
	l, err := locate(root.Content[0], tokens, opts, c.Pointer)
	if err != nil {
		return nil, nil, err
	}
	li := newLineIndex(data)
	switch {
	case l.node != nil && c.Remove:
		out, err := removeEntry(li, l, c)
		return out, l.fileTok, err
	case l.node != nil:
		out, err := replaceValue(li, l, c, root)
		return out, l.fileTok, err
	case c.Remove:
		// Already absent from the file: nothing to write.
		return data, l.fileTok, nil
	}
	out, err := addEntry(li, l, c, root)
	return out, l.fileTok, err
}

// usedAnchors lists the anchors that an alias refers to.
func usedAnchors(n *yaml.Node, into map[*yaml.Node]bool) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		into[n.Alias] = true
	}
	for _, c := range n.Content {
		usedAnchors(c, into)
	}
}

// notShared refuses an edit under an anchor that an alias uses: the change
// would reach every place the alias stands for.
func notShared(root *yaml.Node, path []*yaml.Node, pointer string) error {
	used := map[*yaml.Node]bool{}
	usedAnchors(root, used)
	for _, n := range path {
		if n.Anchor != "" && used[n] {
			return editErr(pointer, ReasonShared, "the value is under the anchor &%s (line %d), also used through *%s elsewhere: edit it by hand", n.Anchor, n.Line, n.Anchor)
		}
	}
	return nil
}

func replaceValue(li *lineIndex, l *located, c Change, root *yaml.Node) ([]byte, error) {
	n := l.node
	if err := notShared(root, append(l.path, n), c.Pointer); err != nil {
		return nil, err
	}
	if err := checkType(n, c); err != nil {
		return nil, err
	}
	if m, ok := c.Value.(map[string]any); ok && n.Kind == yaml.MappingNode {
		// Write leaf by leaf, so the mapping keeps its layout.
		return nil, editErr(c.Pointer, ReasonUnsupported, "the value is a mapping of %d keys: adopt its fields one by one (--field %s/KEY)", len(m), c.Pointer)
	}
	s := li.start(n)
	e, err := li.end(n, l.inFlow)
	if err != nil {
		return nil, editErr(c.Pointer, ReasonUnsupported, "%v", err)
	}
	if bytes.Contains(li.data[s:e], []byte("{{")) {
		return nil, editErr(c.Pointer, ReasonTemplate, "the value at line %d is a template expression", n.Line)
	}
	var text string
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		str, ok := c.Value.(string)
		if !ok {
			return nil, editErr(c.Pointer, ReasonTypeMismatch, "the file holds a text block at line %d, live holds %s", n.Line, model.ValueKind(c.Value, "mapping", "list"))
		}
		text = blockScalar(li, s, str, n.Style)
	} else {
		style := n.Style
		if n.Kind != yaml.ScalarNode {
			style = 0
		}
		text, err = render(c.Value, style, l.inFlow || n.Style&yaml.FlowStyle != 0, indentOf(li.data, li.lineStart(s)))
		if err != nil {
			return nil, editErr(c.Pointer, ReasonUnsupported, "%v", err)
		}
	}
	return splice(li.data, s, e, text), nil
}

// checkType refuses to write a live value of another kind than the file
// holds (a string where the manifest has a number): the manifest would no
// longer match its schema, or the field is not what the pointer thinks.
func checkType(n *yaml.Node, c Change) error {
	var fileKind string
	switch n.Kind {
	case yaml.MappingNode:
		fileKind = "mapping"
	case yaml.SequenceNode:
		fileKind = "list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil
		case "!!int", "!!float":
			fileKind = "number"
		case "!!bool":
			fileKind = "boolean"
		default:
			fileKind = "string"
		}
	default:
		return nil
	}
	liveKind := model.ValueKind(c.Value, "mapping", "list")
	if liveKind == "null" || liveKind == fileKind {
		return nil
	}
	if intOrString(c.Pointer) && (liveKind == "number" || liveKind == "string") && (fileKind == "number" || fileKind == "string") {
		return nil
	}
	return editErr(c.Pointer, ReasonTypeMismatch, "type mismatch: the file holds a %s at line %d, live holds a %s (%s): writing it would not match the field's schema", fileKind, n.Line, liveKind, jsonText(c.Value))
}

// intOrString lists fields of type IntOrString (k8s.io/apimachinery
// util/intstr) that accept either kind.
func intOrString(pointer string) bool {
	last := pointer[strings.LastIndex(pointer, "/")+1:]
	switch last {
	case "targetPort", "port", "maxSurge", "maxUnavailable", "minAvailable", "partition":
		return true
	}
	return false
}

func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(b.String())
}

// render writes a value as YAML text at a value position: a scalar in
// the original quoting where it can, a collection in flow (JSON) form
// inside flow collections and in block form (starting on a new line,
// indented under the key at column indent) otherwise.
func render(v any, style yaml.Style, flow bool, indent int) (string, error) {
	switch t := v.(type) {
	case map[string]any, []any:
		if flow {
			return jsonText(t), nil
		}
		if m, ok := t.(map[string]any); ok && len(m) == 0 {
			return "{}", nil
		}
		if l, ok := t.([]any); ok && len(l) == 0 {
			return "[]", nil
		}
		return "\n" + blockText(t, indent+2), nil
	case string:
		switch {
		case style&yaml.DoubleQuotedStyle != 0:
			return jsonText(t), nil
		case style&yaml.SingleQuotedStyle != 0 && !strings.ContainsAny(t, "\n\r\t") && utf8.ValidString(t):
			return "'" + strings.ReplaceAll(t, "'", "''") + "'", nil
		}
		b, err := yaml.Marshal(t)
		if err != nil {
			return "", err
		}
		s := strings.TrimSuffix(string(b), "\n")
		if strings.Contains(s, "\n") || (flow && strings.ContainsAny(s, ",[]{}")) {
			return jsonText(t), nil
		}
		return s, nil
	case float64:
		if t == float64(int64(t)) {
			return strconv.FormatInt(int64(t), 10), nil
		}
		return strconv.FormatFloat(t, 'g', -1, 64), nil
	case nil:
		return "null", nil
	}
	return jsonText(v), nil
}

// blockText renders a collection in block style, every line indented.
func blockText(v any, indent int) string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(v)
	_ = enc.Close()
	pad := strings.Repeat(" ", indent)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for i := range lines {
		lines[i] = pad + lines[i]
	}
	return strings.Join(lines, "\n")
}

// blockScalar rewrites a literal block (the indicator at s) with a new
// text, keeping its content indentation.
func blockScalar(li *lineIndex, s int, str string, style yaml.Style) string {
	d := li.data
	contentIndent := indentOf(d, li.lineStart(s)) + 2
	if hdrEnd := li.lineEnd(s); hdrEnd+1 < len(d) {
		if ci := indentOf(d, hdrEnd+1); ci > indentOf(d, li.lineStart(s)) {
			contentIndent = ci
		}
	}
	chomp := "-"
	body := str
	switch {
	case strings.HasSuffix(str, "\n\n"):
		chomp = "+"
		body = strings.TrimSuffix(str, "\n")
	case strings.HasSuffix(str, "\n"):
		chomp = ""
		body = strings.TrimSuffix(str, "\n")
	}
	pad := strings.Repeat(" ", contentIndent)
	lines := strings.Split(body, "\n")
	for i, ln := range lines {
		if ln != "" {
			lines[i] = pad + ln
		}
	}
	// A folded block folds line breaks: it keeps its indicator only for
	// a text of one line, where folding changes nothing.
	indicator := "|"
	if style&yaml.FoldedStyle != 0 && !strings.Contains(body, "\n") {
		indicator = ">"
	}
	return indicator + chomp + "\n" + strings.Join(lines, "\n")
}

func renderKey(k string) string {
	b, err := yaml.Marshal(k)
	if err != nil {
		return jsonText(k)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if strings.Contains(s, "\n") {
		return jsonText(k)
	}
	return s
}

// quotedKeys reports whether the document writes its keys in double
// quotes (JSON), so that added keys follow.
func quotedKeys(root *yaml.Node) bool {
	if len(root.Content) == 0 || len(root.Content[0].Content) == 0 {
		return false
	}
	return root.Content[0].Content[0].Style&yaml.DoubleQuotedStyle != 0
}

// addEntry adds a key missing from the file into its parent mapping, in
// the parent's style (block lines at the keys' indentation, or a flow
// entry before the closing brace).
func addEntry(li *lineIndex, l *located, c Change, root *yaml.Node) ([]byte, error) {
	p := l.parent
	if err := notShared(root, l.path, c.Pointer); err != nil {
		return nil, err
	}
	value := c.Value
	for i := len(l.rest) - 1; i >= 1; i-- {
		if _, err := strconv.Atoi(l.rest[i]); err == nil {
			return nil, editErr(c.Pointer, ReasonUnsupported, "a new list item: add it by hand")
		}
		value = map[string]any{l.rest[i]: value}
	}
	key := renderKey(l.rest[0])
	if p.Style&yaml.FlowStyle != 0 || l.inFlow {
		s := li.start(p)
		e, err := matchClose(li.data, s)
		if err != nil {
			return nil, editErr(c.Pointer, ReasonUnsupported, "%v", err)
		}
		closeAt := e - 1
		if quotedKeys(root) {
			// A JSON file stays JSON.
			key = jsonText(l.rest[0])
		}
		v, err := render(value, 0, true, 0)
		if err != nil {
			return nil, editErr(c.Pointer, ReasonUnsupported, "%v", err)
		}
		entry := key + ": " + v
		if len(p.Content) > 0 {
			last, err := li.end(p.Content[len(p.Content)-1], true)
			if err != nil {
				return nil, editErr(c.Pointer, ReasonUnsupported, "%v", err)
			}
			return splice(li.data, last, last, ", "+entry), nil
		}
		return splice(li.data, closeAt, closeAt, entry), nil
	}
	if len(p.Content) == 0 {
		return nil, editErr(c.Pointer, ReasonUnsupported, "empty mapping at line %d", p.Line)
	}
	indent := p.Content[0].Column - 1
	last := p.Content[len(p.Content)-1]
	lastEnd, err := li.end(last, false)
	if err != nil {
		return nil, editErr(c.Pointer, ReasonUnsupported, "%v", err)
	}
	at := li.lineEnd(lastEnd)
	var text string
	switch value.(type) {
	case map[string]any, []any:
		v, err := render(value, 0, false, indent)
		if err != nil {
			return nil, editErr(c.Pointer, ReasonUnsupported, "%v", err)
		}
		text = key + ":" + v
	default:
		v, err := render(value, 0, false, indent)
		if err != nil {
			return nil, editErr(c.Pointer, ReasonUnsupported, "%v", err)
		}
		text = key + ": " + v
	}
	nl := "\n"
	if at == len(li.data) && (at == 0 || li.data[at-1] == '\n') {
		nl = ""
	}
	if nl == "" {
		return splice(li.data, at, at, strings.Repeat(" ", indent)+text+"\n"), nil
	}
	return splice(li.data, at, at, nl+strings.Repeat(" ", indent)+text), nil
}

// removeEntry deletes a key and its value lines from a block mapping.
func removeEntry(li *lineIndex, l *located, c Change) ([]byte, error) {
	if l.key == nil || l.inFlow {
		return nil, editErr(c.Pointer, ReasonUnsupported, "removing a list item or a flow entry: edit it by hand")
	}
	ks := li.offset(l.key.Line, l.key.Column)
	s := li.lineStart(ks)
	if strings.TrimSpace(string(li.data[s:ks])) != "" && strings.TrimSpace(string(li.data[s:ks])) != "-" {
		return nil, editErr(c.Pointer, ReasonUnsupported, "the key at line %d shares its line", l.key.Line)
	}
	if strings.TrimSpace(string(li.data[s:ks])) == "-" {
		return nil, editErr(c.Pointer, ReasonUnsupported, "the key at line %d opens a list item: edit it by hand", l.key.Line)
	}
	e, err := li.end(l.node, false)
	if err != nil {
		return nil, editErr(c.Pointer, ReasonUnsupported, "%v", err)
	}
	e = li.lineEnd(e)
	if e < len(li.data) {
		e++
	}
	return splice(li.data, s, e, ""), nil
}

// KubernetesLists returns Options that match list items by the merge keys
// of core Kubernetes lists (containers by name, ports by containerPort and
// protocol, env by name...), the table managedfields keeps for objects
// whose managedFields do not say.
func KubernetesLists(live map[string]any) Options {
	return Options{
		Live: live,
		ListKeys: func(tokens []string) []string {
			lt := managedfields.BuiltinListType(tokens)
			if lt.Kind != managedfields.ListMap {
				return nil
			}
			return lt.Keys
		},
		KeyDefaults: func(tokens []string) map[string]any {
			return managedfields.BuiltinListType(tokens).Defaults
		},
	}
}
