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
	tree, err := globsyntax.Parse(pattern)
	if err != nil {
		return "", fmt.Errorf("invalid glob %q: %w", pattern, err)
	}
	var b strings.Builder
	if err := writeGlobNode(&b, tree); err != nil {
		return "", fmt.Errorf("invalid glob %q: %w", pattern, err)
	}
	return b.String(), nil
}

func writeGlobNode(b *strings.Builder, n *ast.Node) error {
	switch n.Kind {
	case ast.KindNothing:
	case ast.KindPattern:
		// Concatenation binds tighter than |, and alternatives are
		// wrapped below, so a pattern needs no group of its own.
		for _, c := range n.Children {
			if err := writeGlobNode(b, c); err != nil {
				return err
			}
		}
	case ast.KindAnyOf:
		b.WriteString("(")
		for i, c := range n.Children {
			if i > 0 {
				b.WriteString("|")
			}
			if err := writeGlobNode(b, c); err != nil {
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
	gr, err := globRegex(glob)
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
