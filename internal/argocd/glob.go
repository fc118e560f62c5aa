package argocd

import (
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/globmatch"
)

// compileGlob compiles a group/kind pattern with the library Argo CD's
// util/glob uses (gobwas/glob, no separators).
func compileGlob(pattern string) (globmatch.Glob, error) {
	return globmatch.Compile(pattern)
}

// globMatch mirrors util/glob.Match: an invalid pattern never matches (Argo
// only logs a warning).
func globMatch(pattern, text string) bool {
	return globmatch.Match(pattern, text)
}

// nearMiss says whether want is probably a typo of have: a missing or extra
// character, case, or a one-letter slip (`app` for `apps`).
func nearMiss(want, have string) bool {
	if want == have || want == "" || have == "" {
		return false
	}
	if strings.EqualFold(want, have) {
		return true
	}
	if strings.ContainsAny(want, "*?[{") {
		return false
	}
	return editDistance(strings.ToLower(want), strings.ToLower(have)) <= 2
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
