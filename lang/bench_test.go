package lang

import (
	"fmt"
	"strings"
	"testing"
)

// manyProbes is a script of n BEGIN probes, each a map update and a printf.
func manyProbes(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "BEGIN { @m%d = count(); printf(\"%%d\\n\", %d) }\n", i, i)
	}
	return b.String()
}

// BenchmarkParseProbes parses scripts of 1,000, 4,000 and 21,000 probes
// (the last about 1 MB): the time
// per probe stays flat when parsing is linear in the script.
func BenchmarkParseProbes(b *testing.B) {
	for _, n := range []int{1000, 4000, 21000} {
		text := manyProbes(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, err := Parse(&Source{Name: "x.st", Text: text}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/probe")
			b.ReportMetric(float64(len(text))/1e6, "MB")
		})
	}
}

// denseProbes is a script of about size bytes of probes dense in
// expressions: operators, calls, maps, fields, a conditional, if/else.
func denseProbes(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "BEGIN { $x = 1+2*3-4+5 | @a[$x, %d] - f(8, 9)->y + (z > 3 ? 1 : 2); if ($x > 1) { @b[1] = count(); } else { printf(\"%%d\\n\", $x) } }\n", i)
	}
	return b.String()
}

// BenchmarkParseDense parses 1 MB of probes dense in expressions, where
// a byte of script makes the most nodes.
func BenchmarkParseDense(b *testing.B) {
	text := denseProbes(1 << 20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Parse(&Source{Name: "x.st", Text: text}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(text))/1e6, "MB")
}
