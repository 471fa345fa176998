package output

import (
	"io"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
)

// printerBenchScripts are typical one-liners: pwru-style print of a
// packet's addresses, and a printf of the same.
var printerBenchScripts = []struct{ name, text string }{
	{"print", `tracepoint:skb:kfree_skb { print(len, dev, saddr, sport, dport, reason) }`},
	{"printf", `tracepoint:skb:kfree_skb { printf("%-8s %s:%d -> %s:%d %u %s\n", dev, saddr, sport, daddr, dport, len, reason) }`},
}

// BenchmarkPrinter formats recorded records, as the reader does, to a
// writer that discards them: ns and allocations per event, text and JSON.
func BenchmarkPrinter(b *testing.B) {
	for _, s := range printerBenchScripts {
		events := compilePrinter(b, s.text)
		var recs [][]byte
		for seed := range 64 {
			recs = append(recs, sampleRecord(events[0], seed%3))
		}
		for _, json := range []bool{false, true} {
			name := s.name + "/text"
			if json {
				name = s.name + "/json"
			}
			b.Run(name, func(b *testing.B) {
				benchRecords(b, testPrinter(io.Discard, []*codegen.Event{events[0]}, json), recs)
			})
		}
	}
}

// benchRecords prints the records, in turn, once each loop of b.
func benchRecords(b *testing.B, p *Printer, recs [][]byte) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := p.record(recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	p.flush()
}
