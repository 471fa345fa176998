package lang_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/lang"
)

// TestProbeParams checks that a probe's positional parameters stand there as
// their text, as bpftrace puts them, and that a missing one is an error at
// the probe.
func TestProbeParams(t *testing.T) {
	for _, tc := range []struct {
		text   string
		params []string
		want   string
	}{
		{"interval:ms:$1 { exit() }", []string{"20"}, "Spec interval period=20000000ns  [1:1-1:15]"},
		{"tracepoint:$1:$2 { exit() }", []string{"skb", "kfree_skb"}, "Spec tracepoint category=skb name=kfree_skb  [1:1-1:17]"},
		{"kprobe:tcp_$1 { exit() }", []string{"v4_rcv"}, "Spec kprobe target=tcp_v4_rcv"},
		{"tracepoint:skb:$2 { exit() }", []string{"skb"}, `1:1: $2 in probe "tracepoint:skb:$2" is not given`},
		{"interval:s:$1 { exit() }", nil, "hint: give the script's arguments after it (0 given)"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			script, err := lang.Parse(&lang.Source{Name: "p.st", Text: tc.text, Params: tc.params})
			var got bytes.Buffer
			if err != nil {
				got.WriteString(err.Error())
			} else {
				lang.Dump(&got, script)
			}
			if !strings.Contains(got.String(), tc.want) {
				t.Errorf("want %q in:\n%s", tc.want, got.String())
			}
		})
	}
}

// TestBeginFromParams checks a begin probe whose name a parameter
// completes: BEG$1 with IN is BEGIN.
func TestBeginFromParams(t *testing.T) {
	s, err := lang.Parse(&lang.Source{Name: "t.bt", Text: "BEG$1 { exit() }", Params: []string{"IN"}})
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Probes[0].Specs[0].Kind; k != lang.ProbeBegin {
		t.Errorf("BEG$1 with IN is %q, want BEGIN", k)
	}
}
