// Package typo measures how far a misspelt name is from the names that exist, for the
// "did you mean …?" hints of the definition checker, the template compiler and the testing
// values check. Each caller decides how close is close enough for its names.
package typo

// Distance is the edit distance between a and b, counted in runes: insertions, deletions,
// substitutions, and swaps of two neighbours (page_sise → page_size is 1, pgae → page is 1).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows of the table suffice: a swap looks two rows back.
	back, prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d = min(d, back[j-2]+1)
			}
			cur[j] = d
		}
		back, prev, cur = prev, cur, back
	}
	return prev[len(rb)]
}
