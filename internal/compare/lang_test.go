package compare

import (
	"math/rand"
	"regexp"
	"testing"

	"github.com/gobwas/glob"
)

func TestRelate(t *testing.T) {
	cases := []struct {
		a, b string
		want Relation
	}{
		{"apps", "apps", RelEqual},
		{"(a|b)", "[ab]", RelEqual},
		{`[^/]*`, `.*`, RelEqual}, // over the Kubernetes name alphabet
		{"apps", ".*", RelSubset},
		{".*", "apps", RelSuperset},
		{"apps", "batch", RelDisjoint},
		{"a.*", ".*b", RelOverlap},
		{"^$", "", RelEqual},
		{`networking\.k8s\.io`, `networking.k8s.io`, RelSubset},
		{"(?i)deployment", "Deployment", RelSuperset},
		{`^apps$`, `apps`, RelEqual},
		{`a$b`, `[^\x00-\x{10FFFF}]`, RelEqual}, // $ mid-string never matches
	}
	for _, c := range cases {
		got, err := relate(c.a, c.b)
		if err != nil {
			t.Fatalf("relate(%q, %q): %v", c.a, c.b, err)
		}
		if got.Rel != c.want {
			t.Errorf("relate(%q, %q) = %s, want %s (%+v)", c.a, c.b, got.Rel, c.want, got)
		}
	}
}

func TestRelateWitness(t *testing.T) {
	got, err := relate(`networking\.k8s\.io`, `networking.k8s.io`)
	if err != nil {
		t.Fatal(err)
	}
	if !got.HasOnlyB || regexp.MustCompile(`^networking\.k8s\.io$`).MatchString(got.OnlyB) || !regexp.MustCompile(`^networking.k8s.io$`).MatchString(got.OnlyB) {
		t.Fatalf("witness %q does not separate the languages", got.OnlyB)
	}
}

func TestRelateRejectsWordBoundary(t *testing.T) {
	if _, err := relate(`\bapps`, "apps"); err == nil {
		t.Fatal("want an error for word boundaries")
	}
}

func TestFiniteStrings(t *testing.T) {
	got, ok, err := finiteStrings("(frontend|backend)(-canary)?", 16)
	if err != nil || !ok {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	want := []string{"backend", "backend-canary", "frontend", "frontend-canary"}
	if len(got) != len(want) {
		t.Fatalf("got %q want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q want %q", got, want)
		}
	}
	if _, ok, _ := finiteStrings("app-.*", 16); ok {
		t.Fatal("app-.* is infinite")
	}
	if _, ok, _ := finiteStrings("[a-z][a-z][a-z]", 16); ok {
		t.Fatal("over the limit must not be ok")
	}
}

// TestGlobRegexAgreesWithGobwas checks the glob translation against gobwas
// itself (Argo CD's matcher) on random strings.
func TestGlobRegexAgreesWithGobwas(t *testing.T) {
	globs := []string{"", "*", "**", "apps", "*.k8s.io", "?pps", "[a-c]*", "[!a]*", "{apps,batch}", "{apps,*.io}", `a\*b`, "cert-manager.io", "[abc]x", "[!abc]x", "a{b,c{d,e}}f", "*_*", "a,b", "}"}
	rng := rand.New(rand.NewSource(1))
	alpha := []rune("abcdeiopsx.-_*,}{AZ9")
	for _, g := range globs {
		gg, err := glob.Compile(g)
		if err != nil {
			t.Fatalf("gobwas %q: %v", g, err)
		}
		re, err := globRegex(g)
		if err != nil {
			t.Fatalf("globRegex(%q): %v", g, err)
		}
		rx := regexp.MustCompile("^(?:" + re + ")$")
		samples := []string{"", "apps", "batch", "networking.k8s.io", "a*b", "axb", "abdf", "acef", "a_b", "a,b", "}", "ax", "dx"}
		for i := 0; i < 3000; i++ {
			n := rng.Intn(8)
			s := make([]rune, n)
			for j := range s {
				s[j] = alpha[rng.Intn(len(alpha))]
			}
			samples = append(samples, string(s))
		}
		for _, s := range samples {
			if gg.Match(s) != rx.MatchString(s) {
				t.Errorf("glob %q regex %q disagree on %q: gobwas %v, regex %v", g, re, s, gg.Match(s), rx.MatchString(s))
			}
		}
	}
}

func TestRegexGlob(t *testing.T) {
	cases := []struct {
		re, want string
		ok       bool
	}{
		{"apps", "apps", true},
		{".*", "*", true},
		{"(apps|batch)", "{apps,batch}", true},
		{`.*\.example\.com`, "*.example.com", true},
		{"Deploy.*", "Deploy*", true},
		{"[a-z]+", "", false},
		{"(ab)*", "", false},
	}
	for _, c := range cases {
		got, ok := regexGlob(c.re)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("regexGlob(%q) = %q, %v; want %q, %v", c.re, got, ok, c.want, c.ok)
		}
	}
}
