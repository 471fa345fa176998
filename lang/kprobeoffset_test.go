package lang_test

import (
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/lang"
)

// TestKprobeOffsets checks bpftrace's kprobe:FN+OFFSET: the function and
// the offset split, and an offset where none can be is an error at the
// spec (bpftrace: "Offset not allowed" on kretprobe, "Invalid offset").
func TestKprobeOffsets(t *testing.T) {
	for _, tc := range []struct {
		text, target string
		off          uint64
		err          string
	}{
		{text: "kprobe:ip_rcv+4", target: "ip_rcv", off: 4},
		{text: "kprobe:ip_rcv+0x10", target: "ip_rcv", off: 16},
		{text: "k:vmlinux:ip_rcv+8", target: "ip_rcv", off: 8},
		{text: "kprobe:ip_rcv", target: "ip_rcv"},
		{text: "kretprobe:ip_rcv+4", err: "1:1: kretprobe:ip_rcv+4: offset not allowed on a kretprobe probe"},
		{text: "fentry:ip_rcv+4", err: "1:1: fentry:ip_rcv+4: offset not allowed on a fentry probe"},
		{text: "kprobe:ip_rcv+", err: `1:1: invalid offset in "kprobe:ip_rcv+"`},
		{text: "kprobe:ip_rcv+x", err: `1:1: invalid offset in "kprobe:ip_rcv+x"`},
		{text: "kprobe:+4", err: `1:1: invalid offset in "kprobe:+4"`},
		{text: "kprobe:ip_*+4", err: "1:1: kprobe:ip_*+4: an offset needs one function, not a glob"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			script, err := lang.Parse(&lang.Source{Name: "k.st", Text: tc.text + " { exit() }"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want error %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := script.Probes[0].Specs[0]
			if s.Target != tc.target || s.Offset != tc.off || s.Text != tc.text {
				t.Errorf("target %q offset %d text %q, want %q %d", s.Target, s.Offset, s.Text, tc.target, tc.off)
			}
		})
	}
}
