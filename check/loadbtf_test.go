package check

import (
	"testing"

	"github.com/skbtrace/skbtrace/lang"
)

func TestLoadsByKernelTypeID(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   bool
	}{
		{`tracepoint:skb:kfree_skb { @[reason] = count() }`, true},
		{`tracepoint:skb:kfree_skb { @ = count() }`, true},
		{`tracepoint:skb:kfree_skb { @[args.location, arg1] = count() }`, true},
		{`tracepoint:skb:kfree_skb { @[args.protocol] = count() }`, false},
		{`fentry:tcp_v4_rcv { @ = count() }`, true},
		{`fexit:tcp_v4_rcv { @ = count() }`, true},
		{`skb:ip_rcv { @ = count() }`, true},
		{`kprobe:tcp_v4_rcv { @[comm] = count() }`, false},
		{`BEGIN { printf("hi\n") }`, false},
		{`BEGIN { printf("hi\n") } tracepoint:skb:kfree_skb { @ = count() }`, true},
	} {
		s, err := lang.Parse(&lang.Source{Name: "-e", Text: tc.script})
		if err != nil {
			t.Fatalf("%s: %v", tc.script, err)
		}
		if got := LoadsByKernelTypeID(s); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.script, got, tc.want)
		}
	}
}
