package stdlib

import (
	"fmt"
	"strings"
)

// Verb is one piece of a printf format: literal text, or a conversion.
type Verb struct {
	// Text is the literal text before the conversion (with %% decoded).
	Text string
	// Conv is the conversion letter (d, u, x, X, s, p, c, o), 0 for trailing text.
	Conv byte
	// Flags is the flags and width between % and the letter, e.g. "-16".
	Flags string
}

// ParseFormat splits a printf format into verbs. It accepts C's flags, width
// and length modifiers (which do not matter: every integer is 64-bit here).
func ParseFormat(f string) ([]Verb, error) {
	var out []Verb
	var text strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			text.WriteByte(f[i])
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			text.WriteByte('%')
			continue
		}
		start := i
		for i < len(f) && strings.IndexByte("-+ #0123456789.", f[i]) >= 0 {
			i++
		}
		flags := f[start:i]
		for i < len(f) && strings.IndexByte("hlzjt", f[i]) >= 0 {
			i++
		}
		if i >= len(f) {
			return nil, fmt.Errorf("format ends in the middle of a conversion")
		}
		c := f[i]
		if strings.IndexByte("diuxXspco", c) < 0 {
			return nil, fmt.Errorf("unknown conversion %%%c", c)
		}
		if c == 'i' {
			c = 'd'
		}
		out = append(out, Verb{Text: text.String(), Conv: c, Flags: flags})
		text.Reset()
	}
	if text.Len() > 0 {
		out = append(out, Verb{Text: text.String()})
	}
	return out, nil
}

// Conversions counts the verbs that take an argument.
func Conversions(vs []Verb) int {
	n := 0
	for _, v := range vs {
		if v.Conv != 0 {
			n++
		}
	}
	return n
}
