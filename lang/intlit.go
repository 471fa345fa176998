package lang

import (
	"strconv"
	"strings"
)

// bpftrace's integer literals beyond C's decimal and hex: `_` between
// digits (1_000_000), C's suffixes (123U, 123UL, 123LL: accepted, no
// size), and durations (100ms, 1s: nanoseconds). The lexer takes the
// whole literal as one Int token; parseInt reads it.

// durations are bpftrace 0.26's duration suffixes, in nanoseconds.
var durations = map[string]uint64{
	"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9, "d": 86400e9,
}

// intSuffixes are the suffixes an integer literal may end with, in the
// order they are tried (the reference lexer's alternation): C's (123U,
// 123UL, 123LL: accepted, no size) and the durations.
var intSuffixes = []string{"ULL", "ull", "LLU", "llu", "UL", "ul", "LU", "lu", "LL", "ll",
	"ns", "us", "ms", "U", "u", "L", "l", "s", "m", "h", "d"}

// digitsLen is the length of the decimal digits at the start of s, with
// any `_` that has a digit on each side.
func digitsLen(s string) int {
	n := 0
	for n < len(s) && (isDigit(s[n]) || n > 0 && s[n] == '_' && n+1 < len(s) && isDigit(s[n+1])) {
		n++
	}
	return n
}

// intSuffixLen is the length of the first of intSuffixes that s (the
// rest of an integer literal) starts with, 0 where none is.
func intSuffixLen(s string) int {
	for _, suf := range intSuffixes {
		if strings.HasPrefix(s, suf) {
			return len(suf)
		}
	}
	return 0
}

// splitIntSuffix splits an integer literal's text into its number and
// suffix, with the `_` separators taken out of the number.
func splitIntSuffix(text string) (num, suffix string) {
	end := len(text)
	hex := strings.HasPrefix(text, "0x") || strings.HasPrefix(text, "0X")
	for end > 0 {
		c := text[end-1]
		if isDigit(c) || hex && isHex(c) {
			break
		}
		end--
	}
	return strings.ReplaceAll(text[:end], "_", ""), text[end:]
}

// scaleInt applies an integer literal's suffix to its value.
func scaleInt(v uint64, suffix string) (uint64, error) {
	m, ok := durations[suffix]
	if !ok || m == 1 {
		return v, nil
	}
	if v > ^uint64(0)/m {
		return 0, strconv.ErrRange
	}
	return v * m, nil
}
