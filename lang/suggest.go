package lang

import "slices"

// Suggest returns the candidate closest to name by edit distance, or "" when
// none is close enough to be the likely intent. Used for "did you mean" hints.
func Suggest(name string, candidates []string) string {
	var buf []int
	best, bestD := "", len(name)/2+1
	if bestD > 3 {
		bestD = 3
	}
	for _, c := range candidates {
		// The distance is at least the difference in length: skip the
		// candidates that cannot win without computing it.
		if diff := len(c) - len(name); diff >= bestD || -diff >= bestD {
			continue
		}
		if d := editDistance(name, c, bestD, &buf); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours each cost 1. It stops early
// and returns limit once every alignment costs at least limit.
func editDistance(a, b string, limit int, buf *[]int) int {
	n := len(b) + 1
	if cap(*buf) < 3*n {
		*buf = make([]int, 3*n)
	}
	rows := (*buf)[:3*n]
	prev2, prev, cur := rows[:n], rows[n:2*n], rows[2*n:]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		// A swap reaches back two rows, so a row is final only if the
		// row before it is also past the limit.
		if rowMin >= limit && slices.Min(prev) >= limit {
			return limit
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
