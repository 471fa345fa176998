package stdlib

import (
	"errors"
	"fmt"
)

// GlobToken is one element of a glob pattern: a run of any bytes (Star),
// or one byte in Ranges (each a low and high byte, inclusive), or not in
// them where Negate is set; ? is one byte in 1..255.
type GlobToken struct {
	Star   bool
	Negate bool
	Ranges [][2]byte
}

// MaxGlobTokens bounds a glob's tokens: the code generator keeps the
// pattern's states in the bits of a 32-bit immediate.
const MaxGlobTokens = 30

// ParseGlob splits a glob pattern into its tokens.
func ParseGlob(p string) ([]GlobToken, error) {
	var toks []GlobToken
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			toks = append(toks, GlobToken{Star: true})
		case '?':
			toks = append(toks, GlobToken{Ranges: [][2]byte{{1, 255}}})
		case '[':
			t, n, err := globClass(p[i+1:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += n
		default:
			toks = append(toks, GlobToken{Ranges: [][2]byte{{c, c}}})
		}
	}
	if len(toks) > MaxGlobTokens {
		return nil, fmt.Errorf("the pattern has %d parts, at most %d are supported", len(toks), MaxGlobTokens)
	}
	return toks, nil
}

// globClass reads a class after its [: the token and the bytes read,
// the ] included.
func globClass(p string) (GlobToken, int, error) {
	var t GlobToken
	i := 0
	if i < len(p) && p[i] == '!' {
		t.Negate = true
		i++
	}
	for first := true; i < len(p); first = false {
		c := p[i]
		if c == ']' && !first {
			if len(t.Ranges) == 0 {
				break
			}
			return t, i + 1, nil
		}
		if i+2 < len(p) && p[i+1] == '-' && p[i+2] != ']' {
			if p[i+2] < c {
				return t, 0, fmt.Errorf("the range %s in a class runs backwards", p[i:i+3])
			}
			t.Ranges = append(t.Ranges, [2]byte{c, p[i+2]})
			i += 3
			continue
		}
		t.Ranges = append(t.Ranges, [2]byte{c, c})
		i++
	}
	return t, 0, errors.New("a [ class has no closing ]")
}
