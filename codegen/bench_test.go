package codegen_test

import (
	"testing"

	// The -update flag of golden files is defined there; `go test ./... -update` needs every package to accept it.
	_ "github.com/skbtrace/skbtrace/internal/golden"
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
