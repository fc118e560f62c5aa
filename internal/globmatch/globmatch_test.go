package globmatch

import "testing"

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, text string
		want          bool
	}{
		{"apps", "apps", true},
		{"app", "apps", false},
		{"*", "", true},
		{"*.k8s.io", "networking.k8s.io", true},
		{"Deploy*", "Deployment", true},
		{"[", "x", false},     // does not compile: never matches
		{"*0{", "0a0", false}, // compiles, then panics inside gobwas: never matches
	}
	for _, c := range cases {
		if got := Match(c.pattern, c.text); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.text, got, c.want)
		}
	}
}

func TestPanicsIsReported(t *testing.T) {
	g, err := Compile("*0{")
	if err != nil {
		t.Skipf("gobwas no longer compiles %q: %v", "*0{", err)
	}
	found := false
	for _, s := range []string{"0", "0a0", "a0{", "00000"} {
		if g.Panics(s) {
			found = true
			if g.Match(s) {
				t.Errorf("Match(%q) = true on a panicking pattern", s)
			}
		}
	}
	if !found {
		t.Fatalf("expected gobwas to panic on pattern %q for some input; the guard would be untested", "*0{")
	}
}
