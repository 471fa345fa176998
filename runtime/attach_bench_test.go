package runtime

import (
	"io"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
)

// BenchmarkAttachSkbTracepoints measures loading and attaching skb:* where
// it falls back to every tracepoint that carries an sk_buff (30 here), then
// detaching: what a user waits for before tracing starts, less compiling.
func BenchmarkAttachSkbTracepoints(b *testing.B) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		b.Fatal(err)
	}
	script, err := lang.Parse(&lang.Source{Name: "b.st", Text: `skb:* { @[func] = count() }`})
	if err != nil {
		b.Fatal(err)
	}
	info, err := check.Check(script, check.Options{BTF: spec})
	if err != nil {
		b.Fatal(err)
	}
	targets := ResolveSkbFallback(spec, map[string]bool{"*": true})
	out, err := codegen.Compile(script, info, codegen.Options{SkbTargets: targets})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := Start(out, info, io.Discard, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(len(out.Programs)), "probes")
}
