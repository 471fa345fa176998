package codegen_test

import (
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
)

// BenchmarkCompileDropCount measures parse+check+codegen of issue 3's
// reference script and reports the size of the generated program.
func BenchmarkCompileDropCount(b *testing.B) {
	btfOnce.Do(loadBTF)
	if btfErr != nil {
		b.Skipf("no kernel BTF: %v", btfErr)
	}
	src := &lang.Source{Name: "b.st", Text: `tracepoint:skb:kfree_skb { @[reason] = count() }`}
	var insns int
	for b.Loop() {
		script, err := lang.Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		info, err := check.Check(script, check.Options{BTF: btfSpec})
		if err != nil {
			b.Fatal(err)
		}
		out, err := codegen.Compile(script, info)
		if err != nil {
			b.Fatal(err)
		}
		insns = len(out.Programs[0].Prog.Instructions)
	}
	b.ReportMetric(float64(insns), "insns")
}
