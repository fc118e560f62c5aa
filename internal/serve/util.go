package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var getOptions = metav1.GetOptions{}

func listOptions(selector string) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: selector}
}

// plural is the conventional resource name of a kind (lower-case plural),
// the fallback for kinds the cache has no mapping for.
func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}

// valueAt returns the value at an RFC 6901 pointer (list items by index),
// and whether it exists. (Issue 14 gives JSON pointers one home in a leaf
// package; this reader moves there when it lands.)
func valueAt(doc any, pointer string) (any, bool) {
	if pointer == "" {
		return doc, true
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// maxValueLen bounds a value shown in a fight (metrics never carry it).
const maxValueLen = 200

// hashAndShow returns the hash that tells values apart and the compact JSON
// shown for it (truncated). An absent field hashes as "absent".
func hashAndShow(v any, present bool) (string, string) {
	if !present {
		return "absent", "(absent)"
	}
	b, err := json.Marshal(v) // map keys sorted: equal values, equal bytes
	if err != nil {
		return "unencodable", "(unencodable)"
	}
	sum := sha256.Sum256(b)
	show := string(b)
	if len(show) > maxValueLen {
		show = show[:maxValueLen] + "…"
	}
	return hex.EncodeToString(sum[:8]), show
}
