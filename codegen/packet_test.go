package codegen_test

import (
	"errors"
	"os"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/stdlib"
)

// TestEdgeHelpersVerify loads the programs that join segments, fragments
// and reassembled datagrams to their packet, and those that forget a
// followed skb where its memory goes back. They are fentry and fexit
// programs, which this host refuses; the verifier still walks their
// instructions (the bounded walks of a segment list, the stack, the map
// updates) as tp_btf programs on kfree_skb, whose context has as many
// arguments as they read (4 from 6.11 on).
func TestEdgeHelpersVerify(t *testing.T) {
	out := compile(t, `skb:* /mark == 0xdeadbeef/ { track(); print(len, dev) }`)
	n := 0
	for _, p := range out.Programs {
		if p.Helper != codegen.HelperEdge && p.Helper != codegen.HelperForget {
			continue
		}
		if p.Helper == codegen.HelperEdge {
			n++
		}
		spec := p.Prog.Copy()
		spec.AttachType, spec.AttachTo = ebpf.AttachTraceRawTp, "kfree_skb"
		coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: out.Maps, Programs: map[string]*ebpf.ProgramSpec{p.Name: spec}})
		if errors.Is(err, os.ErrPermission) {
			t.Skipf("tp_btf refused here: %v", err)
		}
		if err != nil {
			var ve *ebpf.VerifierError
			if errors.As(err, &ve) {
				t.Fatalf("%s (%s): verifier rejected the program: %+v", p.Name, p.Prog.AttachTo, ve)
			}
			t.Fatalf("%s (%s): %v", p.Name, p.Prog.AttachTo, err)
		}
		info, _ := coll.Programs[p.Name].Info()
		v, _ := info.VerifiedInstructions()
		t.Logf("%s on %s: %d instructions, %d verified", p.Name, p.Prog.AttachTo, len(spec.Instructions), v)
		coll.Close()
	}
	if n != len(codegen.EdgeFuncs) {
		t.Fatalf("%d edge helpers; want one for each of %d EdgeFuncs", n, len(codegen.EdgeFuncs))
	}
}

// TestPrintCarriesPacket: a tracking script's print records carry the
// logical packet ahead of their arguments; a script without track() keeps
// the head it had.
func TestPrintCarriesPacket(t *testing.T) {
	for _, tc := range []struct {
		src    string
		packet bool
	}{
		{`skb:* /mark == 1/ { track(); print(len) }`, true},
		{`skb:* /mark == 1/ { print(len) }`, false},
	} {
		out := compile(t, tc.src)
		for _, ev := range out.Events {
			if ev.Kind != codegen.EventPrint {
				continue
			}
			if ev.Packet != tc.packet {
				t.Errorf("%s: Packet %v; want %v", tc.src, ev.Packet, tc.packet)
			}
			want := codegen.PrintPacket
			if tc.packet {
				want = codegen.PrintEdge + 8
			}
			if ev.Args[0].Offset != want {
				t.Errorf("%s: len at %d; want %d", tc.src, ev.Args[0].Offset, want)
			}
		}
	}
}

// TestPacketEdgeEnum: pkt_edge's names (stdlib) are the edge kinds'
// numbers here, and the packet's builtins compile where a script tracks
// and where it does not (0 there).
func TestPacketEdgeEnum(t *testing.T) {
	want := map[string]uint64{"none": 0, "origin": codegen.EdgeOrigin, "clone": codegen.EdgeClone, "copy": codegen.EdgeCopy,
		"segment": codegen.EdgeSegment, "fragment": codegen.EdgeFragment, "reassembled": codegen.EdgeReassembled,
		"merged": codegen.EdgeMerged, "gro_head": codegen.EdgeGROHead, "encap": codegen.EdgeEncap}
	if len(stdlib.PacketEdgeEnum.Values) != len(want) {
		t.Errorf("%d names; want %d", len(stdlib.PacketEdgeEnum.Values), len(want))
	}
	for _, v := range stdlib.PacketEdgeEnum.Values {
		if w, ok := want[v.Name]; !ok || w != v.Value {
			t.Errorf("%s is %d; want %d", v.Name, v.Value, w)
		}
	}
	for _, src := range []string{
		`skb:* /mark == 1/ { track(); if (pkt_edge == "segment") { printf("%llx %u %u %llx\n", packet, pkt_index, pkt_count, pkt_parent) } }`,
		`skb:* /mark == 1/ { print(packet, pkt_edge) }`,
	} {
		compile(t, src)
	}
}
