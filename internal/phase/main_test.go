package phase

import (
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

func BenchmarkCheckFresh(b *testing.B) {
	for b.Loop() {
		spec, _ := btf.LoadKernelSpec()
		spec = spec.Copy()
		s, _ := lang.Parse(&lang.Source{Name: "x", Text: `tracepoint:skb:kfree_skb { @[reason] = count() } BEGIN { exit() }`})
		if _, err := check.Check(s, check.Options{BTF: spec}); err != nil {
			b.Fatal(err)
		}
	}
}
