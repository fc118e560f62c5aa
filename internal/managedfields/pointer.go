package managedfields

import (
	"fmt"
	"strconv"
	"strings"
)

// SplitPointer splits an RFC 6901 JSON pointer into its unescaped reference
// tokens. "" is the whole document and yields no tokens.
func SplitPointer(pointer string) ([]string, error) {
	if pointer == "" {
		return nil, nil
	}
	if pointer[0] != '/' {
		return nil, fmt.Errorf("invalid JSON pointer %q: must be empty or start with /", pointer)
	}
	parts := strings.Split(pointer[1:], "/")
	for i, p := range parts {
		if !strings.Contains(p, "~") {
			continue
		}
		// RFC 6901 section 4: ~1 before ~0, and a lone ~ is an error.
		for j := 0; j < len(p); j++ {
			if p[j] == '~' && (j+1 >= len(p) || (p[j+1] != '0' && p[j+1] != '1')) {
				return nil, fmt.Errorf("invalid JSON pointer %q: bad escape in %q", pointer, p)
			}
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

// EscapeToken escapes one reference token for a JSON pointer.
func EscapeToken(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// JoinPointer builds a JSON pointer from unescaped tokens.
func JoinPointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(EscapeToken(t))
	}
	return b.String()
}

// Lookup resolves an RFC 6901 pointer in a decoded JSON document (maps,
// slices, scalars); list items are addressed by index.
func Lookup(doc any, pointer string) (any, bool) {
	tokens, err := SplitPointer(pointer)
	if err != nil {
		return nil, false
	}
	cur := doc
	for _, tok := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) || (len(tok) > 1 && tok[0] == '0') {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
