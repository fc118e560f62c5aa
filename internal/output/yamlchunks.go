package output

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// chunkNodes is the size (maps, lists and values) past which an object
// is printed as YAML in pieces: sigs.k8s.io/yaml goes through yaml.v2,
// whose emitter keeps every event of a document until the document ends
// (hundreds of bytes each): a 12 MB object with 100k list items took
// 700 MB for its YAML alone (issue 29). A variable for the tests.
var chunkNodes = 4096

// writeYAML writes what yaml.Marshal(v) gives, byte for byte; an object
// larger than chunkNodes is written in pieces of about that size, each
// marshalled inside a skeleton of its path so that it lands at the
// columns it has in the whole document (yaml.v2 folds long lines by
// column), its path's lines cut off. A pair's lines in a block mapping,
// an item's in a block sequence, depend on nothing but the pair or the
// item and their column; TestWriteYAMLChunksAsMarshal holds this.
func writeYAML(w io.Writer, v any) error {
	var root map[string]any
	switch t := v.(type) {
	case *unstructured.Unstructured:
		root = t.Object
	case map[string]any:
		root = t
	}
	if root == nil || size(root, chunkNodes) < chunkNodes {
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	c := &chunker{w: w}
	return c.splitMap(nil, root, 0, -1)
}

// step is one step of a path: a map key, or into the one item of a list.
type step struct {
	key   string
	isKey bool
}

type chunker struct{ w io.Writer }

// size counts the nodes of v, stopping at limit.
func size(v any, limit int) int {
	n := 1
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			if n >= limit {
				return n
			}
			n += size(x, limit-n)
		}
	case []any:
		for _, x := range t {
			if n >= limit {
				return n
			}
			n += size(x, limit-n)
		}
	}
	return n
}

// splittable says whether a value may be split further: a non-empty map,
// or a non-empty list of anything but lists ("- - x" puts two items on
// one line).
func splittable(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) > 0
	case []any:
		for _, x := range t {
			if _, ok := x.([]any); ok {
				return false
			}
		}
		return len(t) > 0
	}
	return false
}

// simpleKey says whether yaml.v2 writes key on one line, "key:" (a key
// past 128 characters becomes a complex key, "? key").
func simpleKey(key string) bool {
	return len(key) < 100 && !strings.ContainsAny(key, "\n\r")
}

// keyOrder is the order yaml.v2 writes m's keys in (its own order: digits
// compared as numbers), read back from yaml.v2 itself.
func keyOrder(m map[string]any) ([]string, error) {
	probe := make(map[string]int, len(m))
	for k := range m {
		probe[k] = 0
	}
	b, err := yamlv2.Marshal(probe)
	if err != nil {
		return nil, err
	}
	var back yamlv2.MapSlice
	if err := yamlv2.Unmarshal(b, &back); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(back))
	for _, it := range back {
		k, ok := it.Key.(string)
		if !ok {
			return nil, fmt.Errorf("yaml key %v read back as %T", it.Key, it.Key)
		}
		keys = append(keys, k)
	}
	if len(keys) != len(m) {
		return nil, fmt.Errorf("yaml read back %d keys of %d", len(keys), len(m))
	}
	return keys, nil
}

func keysOf(path []step) int {
	n := 0
	for _, s := range path {
		if s.isKey {
			n++
		}
	}
	return n
}

// skeleton puts leaf at path.
func skeleton(path []step, leaf any) any {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].isKey {
			leaf = map[string]any{path[i].key: leaf}
		} else {
			leaf = []any{leaf}
		}
	}
	return leaf
}

// emit writes leaf marshalled at path, from line keep on (the lines of
// the path before it are written); line fix, when not -1, is the first
// line of a pair that is not the first of a list item's map: its "- "
// becomes "  ".
func (c *chunker) emit(path []step, leaf any, keep, fix int) error {
	b, err := yaml.Marshal(skeleton(path, leaf))
	if err != nil {
		return err
	}
	for i := 0; i < keep; i++ {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return fmt.Errorf("yaml of a piece has fewer lines than its path")
		}
		b = b[nl+1:]
	}
	if fix >= keep {
		line := b
		for i := keep; i < fix; i++ {
			nl := bytes.IndexByte(line, '\n')
			if nl < 0 {
				return fmt.Errorf("yaml of a piece has fewer lines than its path")
			}
			line = line[nl+1:]
		}
		indent := len(line) - len(bytes.TrimLeft(line, " "))
		if !bytes.HasPrefix(line[indent:], []byte("- ")) {
			return fmt.Errorf("yaml of a list item's pair does not start with \"- \"")
		}
		line[indent] = ' '
	}
	_, err = c.w.Write(b)
	return err
}

// splitMap writes the pairs of m, a map at path, in pieces. keep and fix
// are emit's, for the first piece; the next pieces cut the whole path.
func (c *chunker) splitMap(path []step, m map[string]any, keep, fix int) error {
	keys, err := keyOrder(m)
	if err != nil {
		return err
	}
	inItem := len(path) > 0 && !path[len(path)-1].isKey
	header := keysOf(path)
	group, groupSize, first := map[string]any{}, 0, -1
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		f := fix
		if inItem && first > 0 {
			f = header
		}
		if err := c.emit(path, group, keep, f); err != nil {
			return err
		}
		keep, fix = header, -1
		group, groupSize = map[string]any{}, 0
		return nil
	}
	for i, k := range keys {
		x := m[k]
		n := size(x, chunkNodes)
		if n >= chunkNodes && splittable(x) && simpleKey(k) {
			if err := flush(); err != nil {
				return err
			}
			f := fix
			if inItem && i > 0 {
				f = header
			}
			sub := append(append([]step(nil), path...), step{key: k, isKey: true})
			if err := c.split(sub, x, keep, f); err != nil {
				return err
			}
			keep, fix = header, -1
			continue
		}
		if len(group) == 0 {
			first = i
		}
		group[k] = x
		groupSize += n
		if groupSize >= chunkNodes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// split writes x, the value of a key at path, in pieces.
func (c *chunker) split(path []step, x any, keep, fix int) error {
	if m, ok := x.(map[string]any); ok {
		return c.splitMap(path, m, keep, fix)
	}
	list := x.([]any)
	item := append(append([]step(nil), path...), step{})
	header := keysOf(path)
	var group []any
	groupSize := 0
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		if err := c.emit(path, group, keep, fix); err != nil {
			return err
		}
		keep, fix = header, -1
		group, groupSize = nil, 0
		return nil
	}
	for _, it := range list {
		n := size(it, chunkNodes)
		if m, ok := it.(map[string]any); ok && n >= chunkNodes && len(m) > 0 {
			if err := flush(); err != nil {
				return err
			}
			if err := c.splitMap(item, m, keep, fix); err != nil {
				return err
			}
			keep, fix = header, -1
			continue
		}
		group = append(group, it)
		groupSize += n
		if groupSize >= chunkNodes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
