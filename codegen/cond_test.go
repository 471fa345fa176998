package codegen_test

import (
	"fmt"
	"testing"
)

// TestConditionsEndToEnd evaluates conditions on real drops (len is 1345
// at udp_rcv) as values, predicates, ifs and ternaries: comparisons with
// immediates and registers, signed and unsigned, !, && and || nested, and
// arithmetic with constant operands.
func TestConditionsEndToEnd(t *testing.T) {
	const sent, payload = 2, 1337
	neg := int64(-1345)
	cases := []struct {
		pred, key string
		want      uint64
		none      bool // the predicate is false: nothing counted
	}{
		{"", "len > 10 && len < 5000", 1, false},
		{"", "len < 10 || len == 1345", 1, false},
		{"", "len < 10 || len == 1346", 0, false},
		{"", "!(len == 1345)", 0, false},
		{"", "!(len != 1345) && !(len > 2000)", 1, false},
		{"", "(len > 1 && len < 2) || (len >= 1345 && len <= 1345)", 1, false},
		{"", "(len > 1 || len < 2) && (len > 1345 || len < 1345)", 0, false},
		{"", "len == 1345 ? 7 : 9", 7, false},
		{"", "len != 1345 ? 7 : 9", 9, false},
		{"", "0 - len < 0", 1, false},
		{"", "(0 - len) / 5", uint64(neg / 5), false},
		{"", "len * 3 + 1 - 2", 1345*3 - 1, false},
		{"", "(len << 3) >> 1", 1345 * 4, false},
		{"", "len % 100 + len / 100 + (len & 0xf) + (len | 0x10000) + (len ^ 1)", 45 + 13 + 1 + (1345 | 0x10000) + 1344, false},
		{"", "len > 0x100000000", 0, false},
		{"", "len + 0x100000000", 1345 + 0x100000000, false},
		{"len > 1000 && !(len < 1300) && (len == 1 || len == 1345 || len == 2)", "1", 1, false},
		{"len > 1000 && len < 1300", "1", 0, true},
		{"!(len > 1000) || len == 1345", "2", 2, false},
		{"len", "3", 3, false},
		{"!len", "4", 0, true},
	}
	for _, c := range cases {
		pred := `reason == "NO_SOCKET" && len == 1345`
		if c.pred != "" {
			pred += " && (" + c.pred + ")"
		}
		script := fmt.Sprintf(`tracepoint:skb:kfree_skb /%s/ { @[%s] = count() }`, pred, c.key)
		t.Run(script, func(t *testing.T) {
			counts, _, _ := dropsByKey(t, script, sent, payload)
			if c.none {
				if len(counts) != 0 {
					t.Errorf("counts %v, want none: the predicate is false", counts)
				}
				return
			}
			if counts[c.want] != sent || len(counts) != 1 {
				t.Errorf("counts %v, want only %d with %d", counts, c.want, sent)
			}
		})
	}
	// An if / else if / else chain and a ternary in a variable.
	script := `tracepoint:skb:kfree_skb /reason == "NO_SOCKET" && len == 1345/ {
		$v = 0;
		if (len > 2000 || len < 100) { $v = 1 } else if (len > 1300 && !(len > 1400)) { $v = 2 } else { $v = 3 }
		$w = len >= 1345 ? 10 : 20;
		@[$v + $w] = count() }`
	counts, _, _ := dropsByKey(t, script, sent, payload)
	if counts[12] != sent || len(counts) != 1 {
		t.Errorf("if chain: counts %v, want only 12 with %d", counts, sent)
	}
}
