// Package jsonpointer is the one home of RFC 6901 JSON pointers in
// kubectl-drift: parsing (with one error wording), escaping, joining and
// walking decoded JSON (maps, slices, scalars).
//
// It is ours rather than github.com/go-openapi/jsonpointer because that
// library accepts what RFC 6901 forbids: a lone or bad "~" escape
// ("/a~2b" unescapes to itself), and list indexes with a sign or leading
// zeros ("+1", "01", through strconv.Atoi). Both engines' rules are
// pointers a user wrote, so we must reject what the RFC rejects.
package jsonpointer

import (
	"fmt"
	"strings"
)

// Parse splits an RFC 6901 JSON pointer into its unescaped reference
// tokens. "" is the whole document and yields no tokens; "/" is the one
// token "" (the member with the empty name). An invalid pointer gives an
// error that names it and says how to write it.
func Parse(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("invalid JSON pointer %q: must start with '/'", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		if !strings.Contains(t, "~") {
			continue
		}
		// RFC 6901 section 3: "~" is only valid as ~0 or ~1.
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("invalid JSON pointer %q: unescaped '~' in %q (write ~0 for '~', ~1 for '/')", p, t)
			}
		}
		// Section 4: ~1 first, then ~0, so that "~01" becomes "~1".
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// Escape escapes one reference token (~ as ~0, / as ~1).
func Escape(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// Join builds a JSON pointer from unescaped tokens; no tokens give "",
// the whole document. Join(Parse(p)) == p for every valid p.
func Join(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(Escape(t))
	}
	return b.String()
}

// Index reads tok as an array index into a list of length n. RFC 6901
// section 4: "0" or digits without a leading zero; "-" (the item after
// the last) names no existing item, so it never resolves.
func Index(tok string, n int) (int, bool) {
	if tok == "" || len(tok) > 1 && tok[0] == '0' {
		return 0, false
	}
	i := 0
	for k := 0; k < len(tok); k++ {
		c := tok[k]
		if c < '0' || c > '9' {
			return 0, false
		}
		i = i*10 + int(c-'0')
		if i >= n {
			return 0, false
		}
	}
	return i, true
}

// Walk follows unescaped tokens through doc. It returns the value reached
// and how many tokens resolved: all of them (len(tokens)) when the value
// exists, else the position of the first missing one, so that callers can
// name it.
func Walk(doc any, tokens []string) (v any, resolved int) {
	v = doc
	for i, tok := range tokens {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, i
			}
			v = next
		case []any:
			k, ok := Index(tok, len(c))
			if !ok {
				return nil, i
			}
			v = c[k]
		default:
			return nil, i
		}
	}
	return v, len(tokens)
}

// Get resolves pointer p in doc; ok is false when p is invalid or names
// nothing.
func Get(doc any, p string) (v any, ok bool) {
	tokens, err := Parse(p)
	if err != nil {
		return nil, false
	}
	v, n := Walk(doc, tokens)
	return v, n == len(tokens)
}

// Remove deletes the member pointer p names from doc when its parent is a
// map doc holds (list items are never removed: that would shift the
// pointers of the items after it); nothing otherwise.
func Remove(doc any, p string) {
	tokens, err := Parse(p)
	if err != nil || len(tokens) == 0 {
		return
	}
	parent, n := Walk(doc, tokens[:len(tokens)-1])
	if m, ok := parent.(map[string]any); ok && n == len(tokens)-1 {
		delete(m, tokens[len(tokens)-1])
	}
}
