package check_test

import (
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// TestRecordLayouts checks a probe list of classic tracepoints whose
// records have a field elsewhere, or narrower: the expression has the
// first tracepoint's offset (Info.Members, Info.DataLocs) and the widest
// type, and each tracepoint whose own differs reads it as its record has
// it (SpecInfo.RecordMembers, RecordDataLocs), from tracefs's formats.
func TestRecordLayouts(t *testing.T) {
	src := &lang.Source{Name: "layouts.bt", Text: `
tracepoint:net:netif_rx, tracepoint:net:netif_rx_entry { @[str(args.name)] = count(); @s[args.skbaddr] = count() }
tracepoint:tcp:tcp_probe, tracepoint:net:napi_gro_frags_entry { @d = sum(args.data_len) }
`}
	script, err := lang.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	info, err := check.Check(script, compiletest.KernelOptions(kernelBTF(t)))
	if err != nil {
		t.Skipf("tracefs's formats are needed: %v", err)
	}
	fields := map[string]*lang.FieldExpr{}
	lang.Inspect(script, func(n lang.Node) bool {
		if e, ok := n.(*lang.FieldExpr); ok {
			fields[src.Slice(e.Span())] = e
		}
		return true
	})
	rx, entry := info.Probes[script.Probes[0]].Specs[0], info.Probes[script.Probes[0]].Specs[1]
	if m := info.Members[fields["args.skbaddr"]]; m.Offset != 8*8 {
		t.Errorf("skbaddr at bit %d, want netif_rx's 64", m.Offset)
	}
	if m, ok := entry.RecordMembers[fields["args.skbaddr"]]; !ok || m.Offset != 24*8 {
		t.Errorf("netif_rx_entry's skbaddr at bit %d (%v), want 192", m.Offset, ok)
	}
	if _, ok := rx.RecordMembers[fields["args.skbaddr"]]; ok {
		t.Error("netif_rx reads skbaddr elsewhere than the expression's")
	}
	if loc := info.DataLocs[fields["args.name"]]; loc.Offset != 20 {
		t.Errorf("name at %d, want netif_rx's 20", loc.Offset)
	}
	if loc, ok := entry.RecordDataLocs[fields["args.name"]]; !ok || loc.Offset != 8 {
		t.Errorf("netif_rx_entry's name at %d (%v), want 8", loc.Offset, ok)
	}
	probe, frags := info.Probes[script.Probes[1]].Specs[0], info.Probes[script.Probes[1]].Specs[1]
	dl := fields["args.data_len"]
	if got := info.Types[dl]; got != types.U32 {
		t.Errorf("data_len is %v, want u32 (tcp_probe's u16, napi_gro_frags_entry's u32)", got)
	}
	if m, ok := probe.RecordMembers[dl]; !ok || m.Type != types.U16 {
		t.Errorf("tcp_probe reads data_len as %v (%v), want u16", m.Type, ok)
	}
	if _, ok := frags.RecordMembers[dl]; ok && frags.RecordMembers[dl].Type != types.U32 {
		t.Errorf("napi_gro_frags_entry reads data_len as %v", frags.RecordMembers[dl].Type)
	}
}
