package auditapi

import "strings"

// Nearest returns the candidate closest to want: equal ignoring case first,
// then the smallest edit distance up to a third of the length (at least 1,
// at most 3). It returns "" when nothing is close.
func Nearest(want string, candidates []string) string {
	best, bestD := "", 1<<30
	limit := len(want) / 3
	if limit < 1 {
		limit = 1
	}
	if limit > 3 {
		limit = 3
	}
	for _, c := range candidates {
		if c == want {
			continue
		}
		if strings.EqualFold(c, want) {
			return c
		}
		if d := editDistance(want, c); d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours ("spce" -> "spec") cost 1.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := 0; j <= len(b); j++ {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
