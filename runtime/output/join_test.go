package output

import (
	"encoding/binary"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestJoinRecord checks how a join() record prints: its strings up to the
// first empty slot (what follows it is an earlier record's), each cut at
// its NUL, joined by the separator, a newline after; JSON as bpftrace's.
func TestJoinRecord(t *testing.T) {
	rec := make([]byte, 8+codegen.JoinArgs*codegen.JoinArgSize)
	binary.LittleEndian.PutUint64(rec, 0)
	for i, s := range []string{"ls", "-l", "a b", "", "stale"} {
		copy(rec[8+i*codegen.JoinArgSize:], s+"\x00junk")
		if s == "" {
			rec[8+i*codegen.JoinArgSize] = 0
		}
	}
	ev := &codegen.Event{Kind: codegen.EventJoin, Sep: ", "}
	line := func(json bool) string {
		p := testPrinter(nil, []*codegen.Event{ev}, json)
		p.buf = append(p.buf[:0], 'x')
		if err := p.record(rec); err != nil {
			t.Fatal(err)
		}
		return string(p.buf)
	}
	if got := line(false); got != "xls, -l, a b\n" {
		t.Errorf("text: %q", got)
	}
	if got := line(true); got != `x{"data":"ls, -l, a b","type":"join"}`+"\n" {
		t.Errorf("json: %q", got)
	}
}
