package codegen_test

import (
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// TestProbeNameLoads: probe, and probe compared with a name, pass the
// verifier where the program knows its probe (a tracepoint of a glob,
// BEGIN) and where it reads the function's address (skb:'s kprobe form, a
// kprobe glob's shared programs, their return side), and the names the
// values index are the tracepoints' own.
func TestProbeNameLoads(t *testing.T) {
	out := compileWith(t, `
tracepoint:skb:kfree_skb, tracepoint:skb:consume_skb { @tp[probe, probe == "tracepoint:skb:kfree_skb"] = count() }
BEGIN { printf("%s\n", probe) }
i:ms:100 { printf("%s\n", probe) }
skb:ip_rcv* /probe == "kprobe:ip_rcv"/ { @skb[probe] = count() }
kprobe:tcp_v4_* { @k[probe, probe != "kprobe:tcp_v4_rcv"] = count() }
kretprobe:tcp_v4_* /probe == "kretprobe:tcp_v4_rcv"/ { @r[probe] = count() }
`, codegen.Options{Ksym: kernel.KsymAddr})
	load(t, out)
	want := map[string]bool{"tracepoint:skb:kfree_skb": true, "tracepoint:skb:consume_skb": true, "BEGIN": true, "interval:ms:100": true}
	for _, n := range out.ProbeNames {
		if !want[n] {
			t.Errorf("probe name %q", n)
		}
		delete(want, n)
	}
	if len(want) > 0 {
		t.Errorf("no probe names %v in %q", want, out.ProbeNames)
	}
}
