package compare

import (
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/globmatch"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// FuzzGlobRegex is a differential fuzz: for any glob gobwas accepts, our
// regex must accept exactly the strings gobwas matches (Argo CD's matcher).
func FuzzGlobRegex(f *testing.F) {
	for _, s := range []string{"*", "apps", "{a,b}", "[!a-c]x", `a\*`, "*.k8s.io", "?", "[abc]", "{a,{b,c}}d"} {
		f.Add(s, "apps")
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		g, err := globmatch.Compile(pattern)
		re, rerr := globRegex(pattern)
		if err != nil {
			if rerr == nil {
				t.Skip() // we may accept more; Argo then never matches
			}
			return
		}
		if errors.Is(rerr, errUndecidable) {
			t.Skip() // documented approximation
		}
		if unclosedBrace(pattern) {
			if rerr == nil {
				t.Fatalf("unclosed { in %q must be rejected", pattern)
			}
			return // rejected on purpose: gobwas' matcher panics on these
		}
		if rerr != nil {
			t.Fatalf("gobwas compiles %q, we do not: %v", pattern, rerr)
		}
		rx, err := regexp.Compile("^(?:" + re + ")$")
		if err != nil {
			t.Fatalf("glob %q gave bad regex %q: %v", pattern, re, err)
		}
		if g.Panics(s) {
			t.Skip() // gobwas bug on malformed patterns; we never call it unguarded
		}
		if g.Match(s) != rx.MatchString(s) {
			t.Fatalf("glob %q regex %q on %q: gobwas %v, regex %v", pattern, re, s, g.Match(s), rx.MatchString(s))
		}
	})
}

// FuzzAnalyzeJQ: any input is classified, never panics; a path result
// renders as a pointer that parses back to the same path.
func FuzzAnalyzeJQ(f *testing.F) {
	for _, s := range []string{".spec.replicas", `.metadata.labels["a/b"]`, ".a[]?.b", `.a[] | select(.x == 1)`, "..", ".a[1:2]", "del(.a)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		a := analyzeJQ(expr)
		if a.Kind == JQPath {
			p, ok := a.Pattern.Pointer()
			if !ok {
				t.Fatalf("%q: path without pointer", expr)
			}
			back, err := parsePointer(p)
			if err != nil || back.String() != a.Pattern.String() {
				t.Fatalf("%q: pointer %q does not round trip: %v", expr, p, err)
			}
		}
	})
}

// FuzzCompareSelectors: arbitrary selector strings never panic or hang.
func FuzzCompareSelectors(f *testing.F) {
	f.Add("apps", "Deployment", "apps|batch", ".*", "web-.*")
	f.Add("", "*", "^$", "", "(a+)+b")
	f.Fuzz(func(t *testing.T, ag, ak, fg, fk, fname string) {
		rules := []model.Rule{
			{Engine: model.Engine("argocd"), Type: "argocd.ignoreDifferences", Scope: model.ScopeDiff, Origin: model.Origin{Line: 1},
				Target: model.Selector{Group: ag, Kind: ak, Syntax: model.MatchGlob}, JSONPointers: []string{"/spec"}},
			{Engine: model.Engine("flux"), Type: "flux.kustomization.ignore", Scope: model.ScopeDiffAndApply, Origin: model.Origin{Line: 2},
				Target: model.Selector{Group: fg, Kind: fk, Name: fname, Syntax: model.MatchRegex}, JSONPointers: []string{"/spec"}},
		}
		c := Compare(rules, nil, Options{Engines: testEngines})
		if len(c.Results) != 2 {
			t.Fatal(fmt.Sprint(c.Results))
		}
		_ = translateT(t, rules, model.Engine("flux"), nil)
		_ = translateT(t, rules, model.Engine("argocd"), nil)
	})
}
