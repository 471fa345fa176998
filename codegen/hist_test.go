package codegen_test

import (
	"fmt"
	"math/bits"
	"testing"
)

// histBucket is hist()'s bucket of v, as bpftrace numbers them.
func histBucket(v int64) uint64 {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return 1
	}
	return 2 + uint64(bits.Len64(uint64(v))-1)
}

// TestHistBucketsEndToEnd counts real drops into hist() and lhist() and
// checks the bucket each lands in: narrow values (a 4-byte load, whose
// sign and high-word tests are left out), wide and negative ones, and
// lhist bounds that are immediates or not.
func TestHistBucketsEndToEnd(t *testing.T) {
	const sent, payload = 3, 1337
	const l = payload + 8 // len at udp_rcv: the UDP header and the payload
	cases := []struct {
		expr string
		want uint64
	}{
		{"hist(len)", histBucket(l)},
		{"hist(len - len)", histBucket(0)},
		{"hist(len << 30)", histBucket(l << 30)},
		{"hist(len << 52)", histBucket(l << 52)},
		{"hist(0 - len)", histBucket(-l)},
		{"hist(len & 1)", histBucket(l & 1)},
		{"lhist(len, 0, 2000, 100)", 1 + l/100},
		{"lhist(len, 1400, 3000, 100)", 0},
		{"lhist(len, 0, 1000, 100)", 11},
		{"lhist(len, -5000000000, 5000000000, 1000000000)", 1 + (l+5000000000)/1000000000},
		{"lhist(len, 1300, 3000000000, 4000000)", 1},
		{"lhist(len, 3000000000, 5000000000, 4000000)", 0},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			counts, _, _ := dropsByKey(t, fmt.Sprintf(`tracepoint:skb:kfree_skb /reason == "NO_SOCKET" && len == %d/ { @ = %s }`, l, c.expr), sent, payload)
			if counts[c.want] != sent || len(counts) != 1 {
				t.Errorf("buckets %v, want only %d with %d", counts, c.want, sent)
			}
		})
	}
}
