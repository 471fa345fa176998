package lang_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/lang"
)

// TestBpfProgSpec checks the trees of bpf: and bpfret: probes (the program
// type, the glob on its name, its id), bpftrace's fentry:bpf: and
// fexit:bpf: spellings of them, and the positioned errors of bad ones.
func TestBpfProgSpec(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string
	}{
		{"bpf:tc:drop* { exit() }", "Spec bpf type=tc name=drop* id=0  [1:1-1:13]"},
		{"bpfret:xdp:xdp_lb { exit() }", "Spec bpfret type=xdp name=xdp_lb id=0"},
		{"bpf:cgroup_skb:* { exit() }", "Spec bpf type=cgroup_skb name=* id=0"},
		{"bpf:*:cil_from_* { exit() }", "Spec bpf type=* name=cil_from_* id=0"},
		{"bpf:tc:42 { exit() }", "Spec bpf type=tc name=* id=42"},
		{"fentry:bpf:drop9 { exit() }", "Spec bpf type=* name=drop9 id=0"},
		{"fexit:bpf:42:drop9 { exit() }", "Spec bpfret type=* name=drop9 id=42"},
		{"bpf:tcx:drop { exit() }", "1:1: unknown BPF program type \"tcx\""},
		{"bpf:tcx:drop { exit() }", "hint: did you mean tc?"},
		{"bpf:tc { exit() }", `1:1: bpf needs a program type and a name, got "tc"`},
		{"bpfret:xdp:0 { exit() }", "1:1: invalid program id 0"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			script, err := lang.Parse(&lang.Source{Name: "p.st", Text: tc.text})
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
