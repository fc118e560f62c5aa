package output

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type ygen struct{ r *rand.Rand }

func (g ygen) key() string {
	keys := []string{"a", "b", "name", "value", "true", "1", "10", "9", "a10", "a9", "a b", "-x", "k:{\"name\":\"E1\"}", "f:spec", ".", "", "null", "é", "x" + strings.Repeat("y", 120)}
	return keys[g.r.IntN(len(keys))]
}

func (g ygen) scalar() any {
	switch g.r.IntN(10) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		return int64(g.r.IntN(2000000))
	case 3:
		return float64(g.r.IntN(3000000)) / 2
	case 4:
		return strings.Repeat("word ", 5+g.r.IntN(40)) // folded past 80 columns
	case 5:
		return "line one\nline two\n"
	case 6:
		return []string{"", "true", "1.5", "- x", "a: b", "#c", "'q'", "\"d\"", "~"}[g.r.IntN(9)]
	}
	return fmt.Sprintf("v%d", g.r.IntN(100))
}

func (g ygen) value(depth int) any {
	if depth > 3 {
		return g.scalar()
	}
	switch g.r.IntN(6) {
	case 0:
		m := map[string]any{}
		for range g.r.IntN(7) {
			m[g.key()] = g.value(depth + 1)
		}
		return m
	case 1:
		var l []any
		for range g.r.IntN(7) {
			l = append(l, g.value(depth+1))
		}
		if l == nil && g.r.IntN(2) == 0 {
			l = []any{}
		}
		return l
	case 2:
		var l []any
		for range g.r.IntN(7) {
			m := map[string]any{}
			for range 1 + g.r.IntN(4) {
				m[g.key()] = g.value(depth + 1)
			}
			l = append(l, m)
		}
		return l
	}
	return g.scalar()
}

// TestWriteYAMLChunksAsMarshal: an object written in pieces (here of 2
// to 40 nodes) is yaml.Marshal's output byte for byte, on random objects
// with keys yaml.v2 orders as numbers, quotes or writes as complex keys,
// strings it folds by column or writes as blocks, lists of lists, empty
// maps and lists.
func TestWriteYAMLChunksAsMarshal(t *testing.T) {
	defer func(n int) { chunkNodes = n }(chunkNodes)
	for seed := range 1000 {
		g := ygen{rand.New(rand.NewPCG(uint64(seed), 3))}
		obj := map[string]any{}
		for range 1 + g.r.IntN(6) {
			obj[g.key()] = g.value(0)
		}
		chunkNodes = 2 + g.r.IntN(40)
		want, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeYAML(&got, obj); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if got.String() != string(want) {
			t.Fatalf("seed %d (pieces of %d nodes): got\n%s\nwant\n%s", seed, chunkNodes, got.String(), want)
		}
	}
}
