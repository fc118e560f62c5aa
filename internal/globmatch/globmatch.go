// Package globmatch compiles Argo CD group/kind globs with the library Argo
// CD's util/glob uses (github.com/gobwas/glob, no separators) and matches
// them without letting the library's panics reach the user.
//
// gobwas/glob v0.2.3 compiles some malformed patterns (e.g. "*0{") and then
// panics with "slice bounds out of range" while matching. Argo CD's
// util/glob.Match does not guard against that; a kubectl plugin must not end
// in a stack trace, so here such a pattern simply matches nothing.
package globmatch

import "github.com/gobwas/glob"

// Glob is a compiled pattern whose Match never panics.
type Glob struct{ g glob.Glob }

// Compile compiles pattern as Argo CD's util/glob does.
func Compile(pattern string) (Glob, error) {
	g, err := glob.Compile(pattern)
	if err != nil {
		return Glob{}, err
	}
	return Glob{g: g}, nil
}

// Match reports whether text matches; a pattern the library panics on
// matches nothing.
func (g Glob) Match(text string) (ok bool) {
	if g.g == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return g.g.Match(text)
}

// Panics reports whether matching text makes the library panic, so callers
// can report the pattern as broken rather than silently non-matching.
func (g Glob) Panics(text string) (panicked bool) {
	if g.g == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	g.g.Match(text)
	return false
}

// Match compiles pattern and matches text; an invalid pattern never matches,
// as in Argo CD's util/glob.Match (which only logs a warning).
func Match(pattern, text string) bool {
	g, err := Compile(pattern)
	if err != nil {
		return false
	}
	return g.Match(text)
}
