package render

import "testing"

func TestSameRepo(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"https://github.com/example/platform.git", "git@github.com:example/platform", true},
		{"https://github.com/example/platform.git", "ssh://git@GitHub.com:22/Example/platform/", true},
		{"https://github.com/example/platform.git", "https://user@github.com/example/platform", true},
		{"https://github.com/example/platform.git", "https://github.com/example/other.git", false},
		{"https://github.com/example/platform.git", "https://gitlab.com/example/platform.git", false},
	} {
		if got := sameRepo(c.a, c.b); got != c.same {
			t.Errorf("sameRepo(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
