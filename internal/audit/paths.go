package audit

import (
	"fmt"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"regexp"
	"strings"
)

// parsePointer splits an RFC 6901 JSON pointer into unescaped tokens.
// "" is the whole document.
func parsePointer(p string) ([]string, error) {
	out, err := jsonpointer.Parse(p)
	if err != nil {
		return nil, err
	}
	// A label or annotation key with a prefix ("example.com/name") written
	// without ~1 parses as two tokens and silently points at nothing.
	for i, t := range out {
		if (t == "annotations" || t == "labels") && i > 0 && (out[i-1] == "metadata") && len(out) > i+2 {
			key := make([]string, len(out)-i-1)
			for k, t := range out[i+1:] {
				key[k] = jsonpointer.Escape(t)
			}
			fixed := jsonpointer.Join(out[:i+1]...) + "/" + strings.Join(key, "~1")
			return nil, fmt.Errorf("invalid JSON pointer %q: unescaped '/' in the key %q (write %s)",
				p, strings.Join(out[i+1:], "/"), fixed)
		}
	}
	return out, nil
}

// anyIndex stands for "every item" in a path derived from jq ([]).
const anyIndex = "*"

var simpleJQ = regexp.MustCompile(`^(\.[A-Za-z_][A-Za-z0-9_]*|\[\]|\[[0-9]+\]|\.?\["[^"]*"\])+$|^\.$`)
var jqStep = regexp.MustCompile(`\.[A-Za-z_][A-Za-z0-9_]*|\[\]|\[[0-9]+\]|\.?\["[^"]*"\]`)

// jqTokens turns a plain jq path such as .spec.template.spec.containers[].image
// into tokens (with "*" for []), so that breadth and danger checks see jq
// rules the way they see JSON pointers. It returns ok=false for anything
// with filters, functions or pipes: those are judged by evaluation only.
func jqTokens(expr string) ([]string, bool) {
	e := strings.TrimSpace(expr)
	if e == "." {
		return nil, true
	}
	if !simpleJQ.MatchString(e) {
		return nil, false
	}
	var out []string
	for _, s := range jqStep.FindAllString(e, -1) {
		switch {
		case s == "[]":
			out = append(out, anyIndex)
		case strings.HasPrefix(s, "[\"") || strings.HasPrefix(s, ".[\""):
			out = append(out, s[strings.Index(s, "\"")+1:len(s)-2])
		case strings.HasPrefix(s, "["):
			out = append(out, s[1:len(s)-1])
		default:
			out = append(out, s[1:])
		}
	}
	return out, true
}

// renderTokens prints tokens as a JSON pointer.
func renderTokens(t []string) string {
	if len(t) == 0 {
		return "/"
	}
	esc := make([]string, len(t))
	for i, s := range t {
		esc[i] = jsonpointer.Escape(s)
	}
	return "/" + strings.Join(esc, "/")
}

// hasPrefixTokens reports whether p starts with prefix; "*" in either
// matches any single token.
func hasPrefixTokens(p, prefix []string) bool {
	if len(prefix) > len(p) {
		return false
	}
	for i := range prefix {
		if prefix[i] != p[i] && prefix[i] != anyIndex {
			return false
		}
	}
	return true
}

func isIndexToken(t string) bool {
	if t == anyIndex {
		return true
	}
	_, ok := atoi(t)
	return ok
}
