package stdlib

import (
	"fmt"
	"strings"
)

// Verb is one piece of a printf format: literal text, or a conversion.
type Verb struct {
	// Text is the literal text before the conversion (with %% decoded).
	Text string
	// Conv is the conversion letter (d, u, x, X, s, p, c, o, r), 0 for trailing text.
	Conv byte
	// Flags is the flags and width between % and the letter, e.g. "-16".
	Flags string
	// Raw is, for bpftrace's %r (a buffer from buf()), its variant: 0 for
	// %r (printable bytes as they are, others \x00), 'x' for %rx (every
	// byte \x00), 'h' for %rh (every byte in hex, spaced: 0a fe). With
	// Conv 'g' it is 'r' for bpftrace 0.26's %gr: an integer printed as
	// GFP flags (AppendGFPFlags).
	Raw byte
	// Length is C's length modifier as written (hh, h, l, ll, z, j, t):
	// hh and h truncate an integer to 8 and 16 bits as C does (%hhx of
	// 0x1234 is 34); the others leave the 64-bit value whole.
	Length string
}

// Bits is the width an integer conversion truncates its value to: 8 for
// hh, 16 for h, 0 (the whole 64 bits) otherwise.
func (v Verb) Bits() int {
	switch v.Length {
	case "hh":
		return 8
	case "h":
		return 16
	}
	return 0
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
		lstart := i
		for i < len(f) && strings.IndexByte("hlzjt", f[i]) >= 0 {
			i++
		}
		length := f[lstart:i]
		if i >= len(f) {
			return nil, fmt.Errorf("format ends in the middle of a conversion")
		}
		c := f[i]
		if strings.IndexByte("diuxXspcorgGeEf", c) < 0 {
			return nil, fmt.Errorf("unknown conversion %%%c", c)
		}
		if c == 'i' {
			c = 'd'
		}
		var raw byte
		if c == 'r' && i+1 < len(f) && (f[i+1] == 'x' || f[i+1] == 'h') || isGFPVerb(f, i) {
			i++
			raw = f[i]
		}
		out = append(out, Verb{Text: text.String(), Conv: c, Flags: flags, Raw: raw, Length: length})
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
