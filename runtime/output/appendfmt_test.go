package output

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/skbtrace/skbtrace/stdlib"
)

// TestVerbsMatchFmt checks the appending printf against fmt, which the
// printer used before, for every flag form and conversion.
func TestVerbsMatchFmt(t *testing.T) {
	flags := []string{"", "1", "5", "-5", "05", "-05", "0-5", "0", "+5", "#", " 3", ".2", "-20", "020"}
	ints := []uint64{0, 7, 51, 1 << 40, ^uint64(0), ^uint64(50)}
	strs := []string{"", "eth0", "vethé1", "a\xffb", "longer than twenty characters"}
	for _, fl := range flags {
		for _, conv := range []byte("duxXo") {
			v := parseVerbs([]stdlib.Verb{{Conv: conv, Flags: fl}}, false)[0]
			for _, n := range ints {
				for _, signed := range []bool{false, true} {
					c := string(conv)
					if c == "u" {
						c = "d"
					}
					var want string
					if conv == 'd' && signed {
						want = fmt.Sprintf("%"+fl+c, int64(n))
					} else {
						want = fmt.Sprintf("%"+fl+c, n)
					}
					if got := string(v.appendInt([]byte("x"), n, conv == 'd' && signed)); got != "x"+want {
						t.Errorf("%%%s%c of %d (signed %v) = %q, want %q", fl, conv, n, signed, got[1:], want)
					}
				}
			}
		}
		v := parseVerbs([]stdlib.Verb{{Conv: 's', Flags: fl}}, false)[0]
		for _, s := range strs {
			want := fmt.Sprintf("%"+fl+"s", s)
			if got := string(v.pad([]byte("x"+s), 1)); got != "x"+want {
				t.Errorf("%%%ss of %q = %q, want %q", fl, s, got[1:], want)
			}
		}
	}
}

// TestJSONStringMatchesMarshal checks the appending quoter against
// encoding/json, which the printer used before, on every byte and on
// multi-byte, invalid and line-separator runes.
func TestJSONStringMatchesMarshal(t *testing.T) {
	cases := []string{"", "plain", "a\"b\\c", "<tag>&amp;", "\u2028\u2029", "é→日本", "bad\xffutf8", "\xe2\x80", "tail\xc3"}
	for c := range 256 {
		cases = append(cases, string([]byte{'x', byte(c), 'y'}))
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got[1:], want)
		}
		if got := appendJSONString(nil, []byte(s)); string(got) != string(want) {
			t.Errorf("appendJSONString([]byte %q) = %s, want %s", s, got, want)
		}
	}
}
