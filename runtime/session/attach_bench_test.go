package session

import (
	"io"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
)

// BenchmarkAttachSkbTracepoints measures loading and attaching skb:* where
// it falls back to every tracepoint that carries an sk_buff (30 here), then
// detaching: what a user waits for before tracing starts, less compiling.
func BenchmarkAttachSkbTracepoints(b *testing.B) {
	targets := ResolveSkbFallback(testkit.KernelBTF(b), map[string]bool{"*": true})
	_, out := compiletest.Compile(b, `skb:* { @[func] = count() }`, check.Options{}, codegen.Options{SkbTargets: targets})
	for b.Loop() {
		s, err := Start(out, io.Discard, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(len(out.Programs)), "probes")
}
