package codegen_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
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
// and reports its instructions, all programs together. Tools that take an
// argument (pktpath's mark) get "1".
func BenchmarkCompileTools(b *testing.B) {
	for _, tool := range scripts.All() {
		b.Run(tool.Name, func(b *testing.B) {
			var insns int
			for b.Loop() {
				insns = 0
				for _, p := range compileArgs(b, tool.Text, []string{"1"}, codegen.Options{}).Programs {
					insns += len(p.Prog.Instructions)
				}
			}
			b.ReportMetric(float64(insns), "insns")
		})
	}
}

// script200 is a generated 200-line script: 20 probes of 10 lines, each
// line a different construct on a different map.
func script200() string {
	var b strings.Builder
	for p := 0; p < 20; p++ {
		fmt.Fprintf(&b, "tracepoint:skb:kfree_skb /len > %d && l4proto == udp/ {\n", p)
		fmt.Fprintf(&b, "\t@c%d[reason] = count();\n", p)
		fmt.Fprintf(&b, "\t@s%d[dport] = sum(len);\n", p)
		fmt.Fprintf(&b, "\t@h%d = hist(len);\n", p)
		fmt.Fprintf(&b, "\t$x = len * %d + sport;\n", p+1)
		fmt.Fprintf(&b, "\tif ($x > 1000) { @big%d[saddr, daddr] = count() }\n", p)
		fmt.Fprintf(&b, "\t@m%d[comm] = max(len);\n", p)
		fmt.Fprintf(&b, "\t@a%d[dev] = avg(len);\n", p)
		fmt.Fprintf(&b, "\t@l%d = lhist(len, 0, 1500, 100);\n", p)
		fmt.Fprintf(&b, "}\n")
	}
	return b.String()
}

// BenchmarkCompile200Lines measures parse+check+codegen of a generated
// 200-line script.
func BenchmarkCompile200Lines(b *testing.B) {
	text := script200()
	if n := strings.Count(text, "\n"); n != 200 {
		b.Fatalf("the script has %d lines", n)
	}
	var insns int
	for b.Loop() {
		insns = 0
		for _, p := range compile(b, text).Programs {
			insns += len(p.Prog.Instructions)
		}
	}
	b.ReportMetric(float64(insns), "insns")
}

// BenchmarkCompileBEGINProbes measures parse+check+codegen of 4,000 BEGIN
// probes, each a map update and a printf: compile time linear in the script.
func BenchmarkCompileBEGINProbes(b *testing.B) {
	var s strings.Builder
	const n = 4000
	for i := range n {
		fmt.Fprintf(&s, "BEGIN { @m%d = count(); printf(\"%%d\\n\", %d) }\n", i, i)
	}
	var insns int
	b.SetBytes(int64(s.Len()))
	for b.Loop() {
		insns = 0
		for _, p := range compile(b, s.String()).Programs {
			insns += len(p.Prog.Instructions)
		}
	}
	b.ReportMetric(float64(insns), "insns")
}
