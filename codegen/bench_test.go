package codegen_test

import (
	"testing"

	// The -update flag of golden files is defined there; `go test ./... -update` needs every package to accept it.
	_ "github.com/skbtrace/skbtrace/internal/golden"
	"github.com/skbtrace/skbtrace/scripts"
)

// BenchmarkCompileDropCount measures parse+check+codegen of issue 3's
// reference script and reports the size of the generated program.
func BenchmarkCompileDropCount(b *testing.B) {
	var insns int
	for b.Loop() {
		insns = len(compile(b, `tracepoint:skb:kfree_skb { @[reason] = count() }`).Programs[0].Prog.Instructions)
	}
	b.ReportMetric(float64(insns), "insns")
}

// BenchmarkCompileTools measures parse+check+codegen of each bundled tool
// and reports its instructions, all programs together.
func BenchmarkCompileTools(b *testing.B) {
	for _, tool := range scripts.All() {
		b.Run(tool.Name, func(b *testing.B) {
			var insns int
			for b.Loop() {
				insns = 0
				for _, p := range compile(b, tool.Text).Programs {
					insns += len(p.Prog.Instructions)
				}
			}
			b.ReportMetric(float64(insns), "insns")
		})
	}
}
