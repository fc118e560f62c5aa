package compare

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	globsyntax "github.com/gobwas/glob/syntax"
	"github.com/gobwas/glob/syntax/ast"
)

// Argo CD matches ignoreDifferences group and kind with
// argo-cd util/glob Match, which is github.com/gobwas/glob Compile(pattern)
// with no separators (util/argo/normalizers/diff_normalizer.go,
// ignoreNormalizer.Normalize). Without separators `*` and `**` both match any
// run of characters and `?` any one character. The empty pattern matches
// only the empty string: a rule with group "" selects the core group only.
//
// globRegex turns such a glob into an equivalent RE2 regex by walking the
// AST of gobwas' own parser, so escapes, `[!a-z]` and `{a,b}` mean exactly
// what they mean to Argo CD.
func globRegex(pattern string) (string, error) {
	if unclosedBrace(pattern) {
		// gobwas v0.2.3 accepts this but its matcher can panic on it
		// (slice bounds out of range), so Argo CD cannot use it safely.
		return "", fmt.Errorf("invalid glob %q: unclosed {", pattern)
	}
	tree, err := globsyntax.Parse(pattern)
	if err != nil {
		return "", fmt.Errorf("invalid glob %q: %w", pattern, err)
	}
	var b strings.Builder
	w := globWriter{b: &b, quirk: !fixedRow(tree)}
	if err := w.node(tree, true); err != nil {
		return "", fmt.Errorf("invalid glob %q: %w", pattern, err)
	}
	if w.quirk && nestedOneRune(tree) {
		return b.String(), fmt.Errorf("%w: glob %q has a one-character or P*S matcher inside {...}; gobwas may also match it against a shorter substring, depending on how it compiles the pattern, so this comparison is approximate", errUndecidable, pattern)
	}
	return b.String(), nil
}

// prefixSuffix recognizes the `P*S` patterns gobwas turns into PrefixSuffix.
func prefixSuffix(n *ast.Node) (string, string, bool) {
	if n.Kind != ast.KindPattern || len(n.Children) != 3 {
		return "", "", false
	}
	a, m, z := n.Children[0], n.Children[1], n.Children[2]
	if a.Kind != ast.KindText || z.Kind != ast.KindText || (m.Kind != ast.KindAny && m.Kind != ast.KindSuper) {
		return "", "", false
	}
	return a.Value.(ast.Text).Text, z.Value.(ast.Text).Text, true
}

// overlapWords are the strings shorter than P+S that start with P and end
// with S.
func overlapWords(p, s string) []string {
	var out []string
	for k := 1; k <= len(p) && k <= len(s); k++ {
		if p[len(p)-k:] == s[:k] {
			out = append(out, p+s[k:])
		}
	}
	return out
}

// nestedOneRune finds one-rune matchers that are alternatives of a {...}
// which is not the whole pattern: there gobwas' empty-match quirk depends
// on its compiler's choice of tree, which is not modelled.
func nestedOneRune(root *ast.Node) bool {
	var walk func(n *ast.Node, top bool) bool
	walk = func(n *ast.Node, top bool) bool {
		if n.Kind == ast.KindAnyOf {
			for _, c := range n.Children {
				if _, _, ps := prefixSuffix(c); !top && (oneRuneMatcher(c) || ps) {
					return true
				}
				if walk(c, top && len(c.Children) == 1) {
					return true
				}
			}
			return false
		}
		for _, c := range n.Children {
			if walk(c, top && len(n.Children) == 1) {
				return true
			}
		}
		return false
	}
	return walk(root, true)
}

// globWriter writes a gobwas AST as a regex.
//
// quirk models a gobwas v0.2.3 behaviour Argo CD inherits: the one-rune
// matchers (`?`, `[!...]`, negated ranges) decode the first rune and
// accept when nothing follows it, so they also accept the empty string
// when matched on their own (match/single.go, match/list.go Match) - the
// whole pattern `?`, or an alternative of `{...}` that the compiler
// matches against a substring (a BTree). `?` thus matches Argo's core group
// "". Only patterns the compiler turns into a fixed-width Row are exempt.
// FuzzGlobRegex checks this against gobwas itself.
type globWriter struct {
	b     *strings.Builder
	quirk bool
}

// fixedRow reports whether gobwas compiles the pattern into a Row: more
// than one element, every one of fixed width.
func fixedRow(root *ast.Node) bool {
	if root.Kind != ast.KindPattern || len(root.Children) < 2 {
		return false
	}
	for _, c := range root.Children {
		if _, ok := fixedWidth(c); !ok {
			return false
		}
	}
	return true
}

func fixedWidth(n *ast.Node) (int, bool) {
	switch n.Kind {
	case ast.KindText:
		return len([]rune(n.Value.(ast.Text).Text)), true
	case ast.KindSingle, ast.KindList, ast.KindRange:
		return 1, true
	case ast.KindPattern:
		w := 0
		for _, c := range n.Children {
			cw, ok := fixedWidth(c)
			if !ok {
				return 0, false
			}
			w += cw
		}
		return w, true
	case ast.KindAnyOf:
		w := -1
		for _, c := range n.Children {
			cw, ok := fixedWidth(c)
			if !ok || w >= 0 && cw != w {
				return 0, false
			}
			w = cw
		}
		return w, w >= 0
	}
	return 0, false
}

// oneRuneMatcher: nodes gobwas compiles to Single or a negated List/Range.
func oneRuneMatcher(n *ast.Node) bool {
	switch n.Kind {
	case ast.KindSingle:
		return true
	case ast.KindList:
		return n.Value.(ast.List).Not
	case ast.KindRange:
		return n.Value.(ast.Range).Not
	case ast.KindPattern:
		return len(n.Children) == 1 && oneRuneMatcher(n.Children[0])
	}
	return false
}

// node writes n; alone says it is matched on its own (the whole pattern or
// an alternative of {...}).
func (w globWriter) node(n *ast.Node, alone bool) error {
	if alone && w.quirk && oneRuneMatcher(n) {
		w.b.WriteString("(?:")
		if err := w.write(n); err != nil {
			return err
		}
		w.b.WriteString(")?")
		return nil
	}
	return w.write(n)
}

func (w globWriter) write(n *ast.Node) error {
	b := w.b
	switch n.Kind {
	case ast.KindNothing:
	case ast.KindPattern:
		if p, sfx, ok := prefixSuffix(n); ok {
			// gobwas compiles `P*S` to match.PrefixSuffix, whose Match is
			// HasPrefix(P) && HasSuffix(S): P and S may overlap, so "a*a"
			// also matches "a" (match/prefix_suffix.go). Add those words.
			b.WriteString("(?:" + regexp.QuoteMeta(p) + ".*" + regexp.QuoteMeta(sfx))
			for _, w := range overlapWords(p, sfx) {
				b.WriteString("|" + regexp.QuoteMeta(w))
			}
			b.WriteString(")")
			return nil
		}
		// Concatenation binds tighter than |, and alternatives are
		// wrapped below, so a pattern needs no group of its own.
		for _, c := range n.Children {
			if err := w.node(c, len(n.Children) == 1 && n.Parent == nil); err != nil {
				return err
			}
		}
	case ast.KindAnyOf:
		b.WriteString("(")
		for i, c := range n.Children {
			if i > 0 {
				b.WriteString("|")
			}
			if err := w.node(c, true); err != nil {
				return err
			}
		}
		b.WriteString(")")
	case ast.KindText:
		b.WriteString(regexp.QuoteMeta(n.Value.(ast.Text).Text))
	case ast.KindAny, ast.KindSuper:
		// No separators: * and ** both cross everything. Names never hold
		// a newline, so . is as good as (?s:.) and reads better.
		b.WriteString(".*")
	case ast.KindSingle:
		b.WriteString(".")
	case ast.KindList:
		l := n.Value.(ast.List)
		if l.Not {
			b.WriteString("[^")
		} else {
			b.WriteString("[")
		}
		for _, r := range l.Chars {
			b.WriteString(classRune(r))
		}
		b.WriteString("]")
	case ast.KindRange:
		r := n.Value.(ast.Range)
		if r.Lo > r.Hi {
			// gobwas compiles an inverted range into a matcher that
			// accepts nothing (or any one character when negated).
			if r.Not {
				b.WriteString(".")
			} else {
				b.WriteString(`[^\x00-\x{10FFFF}]`)
			}
			return nil
		}
		if r.Not {
			b.WriteString("[^")
		} else {
			b.WriteString("[")
		}
		b.WriteString(classRune(r.Lo) + "-" + classRune(r.Hi) + "]")
	default:
		return fmt.Errorf("unknown glob node %v", n.Kind)
	}
	return nil
}

func classRune(r rune) string {
	if plainRune(r) {
		return string(r)
	}
	return fmt.Sprintf(`\x{%x}`, r)
}

// unclosedBrace reports a `{` without its `}` (escapes respected).
func unclosedBrace(p string) bool {
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return depth > 0
}

// globEscape quotes the glob metacharacters of a literal.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '{', '}', '\\', ',':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// regexGlob finds a gobwas glob that accepts exactly the language of the
// Flux regex re, for translating Flux group/kind targets to Argo CD. It
// tries a structural translation first and a finite enumeration second, and
// verifies every candidate by language equality; ok is false when no glob
// can say the same thing (e.g. `[a-z]+`).
func regexGlob(re string) (glob string, ok bool) {
	if p, err := syntax.Parse(re, syntax.Perl); err == nil {
		if g, good := regexNodeGlob(p.Simplify()); good && globEquals(g, re) {
			return g, true
		}
	}
	if words, finite, err := finiteStrings(re, 32); err == nil && finite && len(words) > 0 {
		var g string
		if len(words) == 1 {
			g = globEscape(words[0])
		} else {
			parts := make([]string, len(words))
			for i, w := range words {
				parts[i] = globEscape(w)
			}
			g = "{" + strings.Join(parts, ",") + "}"
		}
		if globEquals(g, re) {
			return g, true
		}
	}
	return "", false
}

func globEquals(glob, re string) bool {
	gr, err := globRegex(glob) // approximate globs are never "equal"
	if err != nil {
		return false
	}
	rel, err := relate(gr, re)
	return err == nil && rel.Rel == RelEqual
}

func regexNodeGlob(p *syntax.Regexp) (string, bool) {
	switch p.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine:
		return "", true
	case syntax.OpLiteral:
		if p.Flags&syntax.FoldCase != 0 {
			return "", false
		}
		return globEscape(string(p.Rune)), true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return "?", true
	case syntax.OpCharClass:
		var alts []string
		for i := 0; i+1 < len(p.Rune); i += 2 {
			lo, hi := p.Rune[i], p.Rune[i+1]
			if !plainRune(lo) || !plainRune(hi) {
				return "", false
			}
			if lo == hi {
				alts = append(alts, globEscape(string(lo)))
			} else {
				// gobwas reads range bounds raw (no escapes).
				alts = append(alts, "["+string(lo)+"-"+string(hi)+"]")
			}
		}
		if len(alts) == 1 {
			return alts[0], true
		}
		return "{" + strings.Join(alts, ",") + "}", true
	case syntax.OpStar:
		if s := p.Sub[0]; s.Op == syntax.OpAnyChar || s.Op == syntax.OpAnyCharNotNL {
			return "*", true
		}
		return "", false
	case syntax.OpCapture:
		return regexNodeGlob(p.Sub[0])
	case syntax.OpConcat:
		var b strings.Builder
		for _, s := range p.Sub {
			g, ok := regexNodeGlob(s)
			if !ok {
				return "", false
			}
			b.WriteString(g)
		}
		return b.String(), true
	case syntax.OpAlternate:
		parts := make([]string, len(p.Sub))
		for i, s := range p.Sub {
			g, ok := regexNodeGlob(s)
			if !ok {
				return "", false
			}
			parts[i] = g
		}
		return "{" + strings.Join(parts, ",") + "}", true
	}
	return "", false
}

// plainRune reports whether r can stand unescaped as a glob range bound.
func plainRune(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == '_'
}
