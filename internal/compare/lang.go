package compare

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The selectors of both engines are regular languages: Argo CD globs
// (gobwas/glob, see glob.go) and Flux's anchored regexes. Two selectors are
// compared by the set of strings they accept, not by their spelling, so that
// `apps` and `{apps}`, `*` and `.*`, `(a|b)` and `[ab]` come out equal. This
// file decides equality and inclusion of such languages with a subset
// construction over Go's compiled regexp program and a product walk.

// alphabet is the set of runes the languages are compared over. Every string
// a selector is matched against (API group, kind, version, name, namespace)
// is a DNS subdomain, a DNS label or a CamelCase identifier, so nothing
// outside [-._a-zA-Z0-9] ever reaches a matcher. Restricting to it makes
// `[^/]*` equal to `.*`, as it is for every real object.
var alphabet = func() []rune {
	// The order only decides which of several shortest witnesses is shown:
	// "-" and lowercase first make them look like real names
	// ("networking-k8s-io" rather than "networking0k8s0io").
	rs := []rune{'-'}
	for r := 'a'; r <= 'z'; r++ {
		rs = append(rs, r)
	}
	for r := '0'; r <= '9'; r++ {
		rs = append(rs, r)
	}
	rs = append(rs, '.')
	for r := 'A'; r <= 'Z'; r++ {
		rs = append(rs, r)
	}
	return append(rs, '_')
}()

// maxStates bounds the subset construction: selectors are short, and a
// pathological regex must not hang the command.
const maxStates = 20000

// errUndecidable is returned for regexes this engine cannot reason about
// (word boundaries) or that explode in size.
var errUndecidable = errors.New("cannot decide: regex too complex")

// lang is a compiled full-match language.
type lang struct {
	src  string // the regex, for messages
	prog *syntax.Prog
	// states interned by key; transitions are computed lazily.
	keys  map[string]int
	sets  [][]uint32 // un-closed pc sets
	start []bool     // whether the state is the initial one
	trans []map[rune]int
	acc   []int8 // -1 unknown, 0 no, 1 yes
}

// anyLang matches every string.
const anyRegex = `(?s:.*)`

// newLang compiles re with full-match semantics (as if anchored ^(?:re)$).
func newLang(re string) (*lang, error) {
	p, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return nil, err
	}
	p = p.Simplify()
	prog, err := syntax.Compile(p)
	if err != nil {
		return nil, err
	}
	for _, in := range prog.Inst {
		if in.Op == syntax.InstEmptyWidth && syntax.EmptyOp(in.Arg)&(syntax.EmptyWordBoundary|syntax.EmptyNoWordBoundary) != 0 {
			return nil, fmt.Errorf("%w: word boundaries in %q", errUndecidable, re)
		}
	}
	l := &lang{src: re, prog: prog, keys: map[string]int{}}
	l.intern([]uint32{uint32(prog.Start)}, true)
	return l, nil
}

func (l *lang) intern(pcs []uint32, start bool) int {
	slices.Sort(pcs)
	pcs = slices.Compact(pcs)
	var b strings.Builder
	if start {
		b.WriteByte('^')
	}
	for _, pc := range pcs {
		b.WriteString(strconv.FormatUint(uint64(pc), 36))
		b.WriteByte(',')
	}
	k := b.String()
	if id, ok := l.keys[k]; ok {
		return id
	}
	id := len(l.sets)
	l.keys[k] = id
	l.sets = append(l.sets, pcs)
	l.start = append(l.start, start)
	l.trans = append(l.trans, nil)
	l.acc = append(l.acc, -1)
	return id
}

// closure follows non-consuming instructions from pcs under the empty-width
// context ctx and returns the consuming instructions and whether Match was
// reached.
func (l *lang) closure(pcs []uint32, ctx syntax.EmptyOp) (out []uint32, match bool) {
	seen := map[uint32]bool{}
	stack := append([]uint32(nil), pcs...)
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &l.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^ctx == 0 {
				stack = append(stack, in.Out)
			}
		case syntax.InstMatch:
			match = true
		case syntax.InstFail:
		default: // rune-consuming
			out = append(out, pc)
		}
	}
	return out, match
}

func (l *lang) ctx(state int) syntax.EmptyOp {
	if l.start[state] {
		return syntax.EmptyBeginText | syntax.EmptyBeginLine
	}
	return 0
}

func (l *lang) accepts(state int) bool {
	if l.acc[state] < 0 {
		_, m := l.closure(l.sets[state], l.ctx(state)|syntax.EmptyEndText|syntax.EmptyEndLine)
		l.acc[state] = 0
		if m {
			l.acc[state] = 1
		}
	}
	return l.acc[state] == 1
}

// step returns the state after consuming r, or an error when the automaton
// grew too large.
func (l *lang) step(state int, r rune) (int, error) {
	if t, ok := l.trans[state][r]; ok {
		return t, nil
	}
	ins, _ := l.closure(l.sets[state], l.ctx(state))
	var next []uint32
	for _, pc := range ins {
		in := &l.prog.Inst[pc]
		if in.MatchRune(r) {
			next = append(next, in.Out)
		}
	}
	id := l.intern(next, false)
	if len(l.sets) > maxStates {
		return 0, errUndecidable
	}
	if l.trans[state] == nil {
		l.trans[state] = map[rune]int{}
	}
	l.trans[state][r] = id
	return id, nil
}

// Relation is how two sets (of strings, objects or paths) relate.
type Relation string

// Relations between two sets A and B.
const (
	RelEqual    Relation = "equal"    // A = B
	RelSubset   Relation = "subset"   // A ⊂ B (A is narrower)
	RelSuperset Relation = "superset" // A ⊃ B (A is broader)
	RelOverlap  Relation = "overlap"  // both have members the other lacks, and share some
	RelDisjoint Relation = "disjoint" // nothing in common
	RelUnknown  Relation = "unknown"  // could not be decided
)

// Invert swaps the roles of A and B.
func (r Relation) Invert() Relation {
	switch r {
	case RelSubset:
		return RelSuperset
	case RelSuperset:
		return RelSubset
	}
	return r
}

// langRel is the relation of two languages with the shortest witnesses.
type langRel struct {
	Rel Relation
	// OnlyA is a shortest string A accepts and B does not ("" with HasOnlyA).
	OnlyA, OnlyB, Both          string
	HasOnlyA, HasOnlyB, HasBoth bool
}

// relate decides how the languages of two regexes relate (full match).
func relate(a, b string) (langRel, error) {
	la, err := newLang(a)
	if err != nil {
		return langRel{Rel: RelUnknown}, err
	}
	lb, err := newLang(b)
	if err != nil {
		return langRel{Rel: RelUnknown}, err
	}
	return relateLangs(la, lb)
}

// relateLangs walks the product of two automata breadth first, so the
// witnesses are shortest strings. The automata keep the states they
// discover, so relating one language to many others reuses them.
func relateLangs(la, lb *lang) (langRel, error) {
	type pair struct{ a, b int }
	type node struct {
		p    pair
		word string
	}
	var res langRel
	seen := map[pair]bool{{0, 0}: true}
	queue := []node{{p: pair{0, 0}}}
	for len(queue) > 0 && !(res.HasOnlyA && res.HasOnlyB && res.HasBoth) {
		n := queue[0]
		queue = queue[1:]
		aa, ab := la.accepts(n.p.a), lb.accepts(n.p.b)
		switch {
		case aa && ab && !res.HasBoth:
			res.HasBoth, res.Both = true, n.word
		case aa && !ab && !res.HasOnlyA:
			res.HasOnlyA, res.OnlyA = true, n.word
		case ab && !aa && !res.HasOnlyB:
			res.HasOnlyB, res.OnlyB = true, n.word
		}
		for _, r := range alphabet {
			na, err := la.step(n.p.a, r)
			if err != nil {
				return langRel{Rel: RelUnknown}, err
			}
			nb, err := lb.step(n.p.b, r)
			if err != nil {
				return langRel{Rel: RelUnknown}, err
			}
			np := pair{na, nb}
			if !seen[np] {
				seen[np] = true
				if len(seen) > maxStates {
					return langRel{Rel: RelUnknown}, errUndecidable
				}
				queue = append(queue, node{p: np, word: n.word + string(r)})
			}
		}
	}
	switch {
	case !res.HasOnlyA && !res.HasOnlyB:
		res.Rel = RelEqual
	case !res.HasOnlyA:
		res.Rel = RelSubset
	case !res.HasOnlyB:
		res.Rel = RelSuperset
	case res.HasBoth:
		res.Rel = RelOverlap
	default:
		res.Rel = RelDisjoint
	}
	return res, nil
}

// finiteStrings lists the strings of a regex's language when it is finite
// and has at most limit members; ok is false otherwise. Used to turn a Flux
// name regex such as `frontend|backend` into Argo CD's exact names.
func finiteStrings(re string, limit int) (out []string, ok bool, err error) {
	l, err := newLang(re)
	if err != nil {
		return nil, false, err
	}
	// Explore the whole reachable automaton first.
	var order []int
	seen := map[int]bool{0: true}
	queue := []int{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		order = append(order, s)
		for _, r := range alphabet {
			t, err := l.step(s, r)
			if err != nil {
				return nil, false, err
			}
			if !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		}
	}
	// live: states from which an accepting state is reachable.
	live := map[int]bool{}
	for changed := true; changed; {
		changed = false
		for _, s := range order {
			if live[s] {
				continue
			}
			if l.accepts(s) {
				live[s], changed = true, true
				continue
			}
			for _, t := range l.trans[s] {
				if live[t] {
					live[s], changed = true, true
					break
				}
			}
		}
	}
	// A cycle through live states means infinitely many strings.
	const (
		white = iota
		grey
		black
	)
	color := map[int]int{}
	var cyclic bool
	var dfs func(s int, word string)
	dfs = func(s int, word string) {
		if cyclic || len(out) > limit {
			return
		}
		color[s] = grey
		if l.accepts(s) {
			out = append(out, word)
		}
		for _, r := range alphabet {
			t := l.trans[s][r]
			if !live[t] {
				continue
			}
			if color[t] == grey {
				cyclic = true
				return
			}
			dfs(t, word+string(r))
			if cyclic {
				return
			}
		}
		color[s] = white // a DAG state may be reached again by another word
	}
	if live[0] {
		dfs(0, "")
	}
	if cyclic || len(out) > limit {
		return nil, false, nil
	}
	sort.Strings(out)
	return out, true, nil
}
