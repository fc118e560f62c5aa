package testutil

import (
	"fmt"
	"strings"
)

// AliasBomb returns YAML's "billion laughs": keys a, b, c, … (levels of
// them, at most 26), the first a list of nine strings and each next one a
// list of nine aliases of the one before: 9^levels strings once expanded.
// A reader must refuse to expand it; a test adds the lines (apiVersion,
// kind, metadata) that make it the object a command looks for.
func AliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i < levels; i++ {
		key, prev := string(rune('a'+i)), string(rune('a'+i-1))
		fmt.Fprintf(&b, "%s: &%s [%s]\n", key, key, strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ","))
	}
	return b.String()
}
