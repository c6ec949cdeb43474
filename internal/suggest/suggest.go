package suggest

// Nearest returns the candidate closest to s by edit distance, or "" when
// none is within maxDist(best) edits — too far to be a typo.
func Nearest(s string, candidates []string, maxDist func(best string) int) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := Distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > maxDist(best) {
		return ""
	}
	return best
}

// Distance is the Levenshtein distance between a and b, over bytes.
func Distance(a, b string) int {
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
