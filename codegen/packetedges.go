package codegen

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// HelperEdge are the programs that join the skbs a followed packet is cut
// into, or put back together as, to its logical packet: GSO segments, IP
// fragments, the reassembled datagram, GRO merges, tunnel
// encapsulations. Each is an fentry or fexit program;
// where the kernel refuses them (or lacks the function) the runtime says
// once what is not followed.
const HelperEdge = "edge"

// MaxSegments bounds the segments of one GSO skb that join its packet (a
// 64 KB TCP send over an MTU of 1500 is 45); the rest are not followed.
const MaxSegments = 128

// EdgeFunc is a kernel function an edge helper attaches to, and what it
// joins.
type EdgeFunc struct {
	Name string
	Kind uint8
}

// EdgeFuncs are the functions edgeHelpers attaches to, in the order of
// its programs.
var EdgeFuncs = []EdgeFunc{
	{"skb_segment", EdgeSegment}, {"skb_segment_list", EdgeSegment},
	{"ip_frag_next", EdgeFragment}, {"ip6_frag_next", EdgeFragment},
	{"ip_fraglist_prepare", EdgeFragment}, {"ip6_fraglist_prepare", EdgeFragment},
	{"inet_frag_reasm_finish", EdgeReassembled},
	{"skb_gro_receive", EdgeMerged}, {"skb_gro_receive_list", EdgeMerged},
	{"udp_set_csum", EdgeEncap}, {"udp6_set_csum", EdgeEncap},
	{"iptunnel_handle_offloads", EdgeEncap},
}

// The frame of an edge helper.
const (
	edgeKey  = -8
	edgeVal  = edgeKey - trackValueSize
	edgeTmp  = edgeVal - 8
	edgeCnt  = edgeTmp - 8
	edgeSegs = edgeCnt - 8
)

// edgeHelpers builds the programs of EdgeFuncs.
func edgeHelpers(skb *btf.Struct) []*Program {
	next, err := skbOffset(skb, "next")
	if err != nil {
		return nil
	}
	var progs []*Program
	add := func(i int, fn EdgeFunc, at ebpf.AttachType, insns asm.Instructions) {
		name := "edge_" + string(rune('a'+i))
		kind := AttachFexit
		if at == ebpf.AttachTraceFEntry {
			kind = AttachFentry
		}
		progs = append(progs, &Program{Name: name, SkbArg: -1, Helper: HelperEdge,
			Attach: Attach{Kind: kind, Text: "track()", Func: fn.Name},
			Prog:   &ebpf.ProgramSpec{Name: name, License: "GPL", Type: ebpf.Tracing, AttachType: at, AttachTo: fn.Name, Instructions: insns}})
	}
	for i, fn := range EdgeFuncs {
		switch fn.Name {
		case "skb_segment":
			add(i, fn, ebpf.AttachTraceFExit, segmentInsns(2, next))
		case "skb_segment_list":
			add(i, fn, ebpf.AttachTraceFExit, segmentInsns(3, next))
		case "ip_frag_next", "ip6_frag_next":
			// The new fragment is the return value, after 2 arguments.
			add(i, fn, ebpf.AttachTraceFExit, fragmentInsns(asm.Instructions{asm.LoadMem(asm.R8, asm.R1, 16, asm.DWord)}, false))
		case "ip_fraglist_prepare", "ip6_fraglist_prepare":
			// The fast path: the skb in args[0] goes out first, and
			// iter->frag (ip_fraglist_iter's first member, the second of
			// ip6_fraglist_iter, since 5.3) is the next fragment.
			off := int16(0)
			if fn.Name == "ip6_fraglist_prepare" {
				off = 8
			}
			read := asm.Instructions{
				asm.LoadMem(asm.R3, asm.R1, 8, asm.DWord),
				asm.Add.Imm(asm.R3, int32(off)),
				asm.Mov.Reg(asm.R1, asm.RFP),
				asm.Add.Imm(asm.R1, edgeTmp),
				asm.Mov.Imm(asm.R2, 8),
				asm.FnProbeReadKernel.Call(),
				asm.LoadMem(asm.R8, asm.RFP, edgeTmp, asm.DWord),
			}
			add(i, fn, ebpf.AttachTraceFEntry, fragmentInsns(read, true))
		case "inet_frag_reasm_finish":
			add(i, fn, ebpf.AttachTraceFExit, reassembledInsns())
		case "skb_gro_receive", "skb_gro_receive_list":
			add(i, fn, ebpf.AttachTraceFEntry, mergedInsns())
		case "udp_set_csum", "udp6_set_csum":
			if data, err := skbOffset(skb, "data"); err == nil {
				add(i, fn, ebpf.AttachTraceFEntry, encapInsns(data))
			}
		case "iptunnel_handle_offloads":
			if protocol, err := skbOffset(skb, "protocol"); err == nil {
				add(i, fn, ebpf.AttachTraceFEntry, ipTunnelInsns(protocol))
			}
		}
	}
	return progs
}

// parentInsns look up the skb in R6: not followed, to done; followed, R9
// points to its value and the child's value at edgeVal is begun with its
// packet, R6 as the parent, and kind.
func parentInsns(kind uint8) asm.Instructions {
	return append(followedInsns(),
		asm.Mov.Reg(asm.R9, asm.R0),
		storeImm64(edgeVal, trackFollowed),
		storeImm64(edgeVal+8, 0),
		storeImm64(edgeVal+16, 0),
		asm.LoadMem(asm.R1, asm.R9, trackPacketOff, asm.DWord),
		asm.StoreMem(asm.RFP, edgeVal+trackPacketOff, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, edgeVal+trackPacketOff+8, asm.R6, asm.DWord),
		storeImm64(edgeVal+trackPacketOff+16, int32(kind)),
	)
}

// lookupTrackedInsns look up the skb in reg in track()'s map: R0 its
// value, or 0.
func lookupTrackedInsns(reg asm.Register) asm.Instructions {
	return append(trackedKeyInsns(reg, edgeKey), asm.FnMapLookupElem.Call())
}

// followedInsns look up the skb in R6: not followed, to done; followed, R0
// points to its value.
func followedInsns() asm.Instructions {
	return append(lookupTrackedInsns(asm.R6),
		asm.JEq.Imm(asm.R0, 0, "done"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.JNE.Imm(asm.R1, trackFollowed, "done"),
	)
}

// joinInsns write the child value at edgeVal under the key in R8, with the
// index in R1 and the count in R2 put into its edge.
func joinInsns() asm.Instructions {
	return asm.Instructions{
		asm.StoreMem(asm.RFP, edgeVal+trackPacketOff+16+edgeIndexOff, asm.R1, asm.Half),
		asm.StoreMem(asm.RFP, edgeVal+trackPacketOff+16+edgeCountOff, asm.R2, asm.Half),
		asm.StoreMem(asm.RFP, edgeKey, asm.R8, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference(TrackedMap),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, edgeKey),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, edgeVal),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
	}
}

// segmentInsns: fexit of skb_segment(head, features) or
// skb_segment_list(skb, features, offset), which return the segments'
// list (linked by ->next; skb_segment_list's begins with skb itself). The
// list is walked twice, bounded by MaxSegments: once to count, once to
// join each as segment i of n; the head's edge keeps n as spawned.
func segmentInsns(args int16, next int32) asm.Instructions {
	readNext := asm.Instructions{
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, edgeTmp),
		asm.Mov.Imm(asm.R2, 8),
		asm.Mov.Reg(asm.R3, asm.R8),
		asm.Add.Imm(asm.R3, next),
		asm.FnProbeReadKernel.Call(),
		asm.LoadMem(asm.R8, asm.RFP, edgeTmp, asm.DWord),
	}
	insns := asm.Instructions{
		asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord),
		asm.LoadMem(asm.R8, asm.R1, 8*args, asm.DWord),
		asm.JEq.Imm(asm.R8, 0, "done"),
		asm.JGT.Imm(asm.R8, -4096, "done"), // ERR_PTR
		asm.StoreMem(asm.RFP, edgeSegs, asm.R8, asm.DWord),
	}
	insns = append(insns, parentInsns(EdgeSegment)...)
	// Count.
	insns = append(insns,
		asm.Mov.Imm(asm.R7, 0),
		asm.JEq.Imm(asm.R8, 0, "counted").WithSymbol("count"),
		asm.JGE.Imm(asm.R7, MaxSegments, "counted"),
		asm.Add.Imm(asm.R7, 1),
	)
	insns = append(insns, readNext...)
	insns = append(insns,
		asm.Ja.Label("count"),
		asm.StoreMem(asm.R9, trackPacketOff+16+edgeSpawnOff, asm.R7, asm.Half).WithSymbol("counted"),
		asm.StoreMem(asm.RFP, edgeCnt, asm.R7, asm.DWord),
		asm.LoadMem(asm.R8, asm.RFP, edgeSegs, asm.DWord),
		asm.Mov.Imm(asm.R7, 0),
		// Join.
		asm.JEq.Imm(asm.R8, 0, "done").WithSymbol("join"),
		asm.JGE.Imm(asm.R7, MaxSegments, "done"),
		asm.Add.Imm(asm.R7, 1),
		asm.JEq.Reg(asm.R8, asm.R6, "next"),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.LoadMem(asm.R2, asm.RFP, edgeCnt, asm.DWord),
	)
	insns = append(insns, joinInsns()...)
	insns = append(insns, asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("next"))
	insns = append(insns, readNext...)
	insns = append(insns, asm.Ja.Label("join"))
	return append(insns, asm.Mov.Imm(asm.R0, 0).WithSymbol("done"), asm.Return())
}

// fragmentInsns: the skb in args[0] makes the fragment that child puts in
// R8 (from the context in R1); the fragment joins its packet. On the slow
// path (ip_frag_next) the skb is the datagram, which makes every
// fragment: fragment k, k one more than the fragments it made so far. On
// the fast path (chained: ip_fraglist_prepare) the skb goes out first,
// fragment 1, and each fragment makes the next: fragment k+1 of the
// datagram the chain began with.
func fragmentInsns(child asm.Instructions, chained bool) asm.Instructions {
	insns := asm.Instructions{asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord)}
	insns = append(insns, child...)
	insns = append(insns, asm.JEq.Imm(asm.R8, 0, "done"), asm.JGT.Imm(asm.R8, -4096, "done"))
	insns = append(insns, parentInsns(EdgeFragment)...)
	if !chained {
		insns = append(insns,
			asm.LoadMem(asm.R1, asm.R9, trackPacketOff+16+edgeSpawnOff, asm.Half),
			asm.Add.Imm(asm.R1, 1),
			asm.StoreMem(asm.R9, trackPacketOff+16+edgeSpawnOff, asm.R1, asm.Half),
			asm.Mov.Imm(asm.R2, 0),
		)
		insns = append(insns, joinInsns()...)
		return append(insns, asm.Mov.Imm(asm.R0, 0).WithSymbol("done"), asm.Return())
	}
	insns = append(insns,
		// A fragment's parent is the chain's first skb: the skb's own
		// parent where the skb is a fragment, else the skb.
		asm.LoadMem(asm.R1, asm.R9, trackPacketOff+16, asm.Byte),
		asm.JNE.Imm(asm.R1, EdgeFragment, "head"),
		asm.LoadMem(asm.R1, asm.R9, trackPacketOff+8, asm.DWord),
		asm.StoreMem(asm.RFP, edgeVal+trackPacketOff+8, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R9, trackPacketOff+16+edgeIndexOff, asm.Half),
		asm.Ja.Label("index"),
		asm.Mov.Imm(asm.R1, 1).WithSymbol("head"),
		asm.Add.Imm(asm.R1, 1).WithSymbol("index"),
		asm.Mov.Imm(asm.R2, 0),
	)
	insns = append(insns, joinInsns()...)
	return append(insns, asm.Mov.Imm(asm.R0, 0).WithSymbol("done"), asm.Return())
}

// reassembledInsns: fexit of inet_frag_reasm_finish(q, head, ...), IPv4's,
// IPv6's and conntrack's: head is now the whole datagram. Followed (it is
// one of the fragments: the kernel morphs the last to arrive into the
// head), its edge says reassembled.
func reassembledInsns() asm.Instructions {
	insns := asm.Instructions{asm.LoadMem(asm.R6, asm.R1, 8, asm.DWord)}
	insns = append(insns, followedInsns()...)
	return append(insns,
		asm.Mov.Imm(asm.R1, EdgeReassembled),
		asm.StoreMem(asm.R0, trackPacketOff+16, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("done"),
		asm.Return(),
	)
}

// mergedInsns: fentry of skb_gro_receive(p, skb) and
// skb_gro_receive_list(p, skb): GRO merges skb into the head p. A
// followed skb's edge says merged, its parent field p; a head not
// followed joins the packet of the first followed skb merged into it.
func mergedInsns() asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R8, asm.R1, 0, asm.DWord), // p
		asm.LoadMem(asm.R6, asm.R1, 8, asm.DWord), // skb
	}
	insns = append(insns, parentInsns(EdgeGROHead)...)
	insns = append(insns,
		// The merged skb: merged into p.
		asm.StoreMem(asm.R9, trackPacketOff+8, asm.R8, asm.DWord),
		asm.Mov.Imm(asm.R1, EdgeMerged),
		asm.StoreMem(asm.R9, trackPacketOff+16, asm.R1, asm.DWord),
	)
	// The head, unless followed already.
	insns = append(insns, lookupTrackedInsns(asm.R8)...)
	insns = append(insns,
		asm.JNE.Imm(asm.R0, 0, "done"),
		asm.Mov.Imm(asm.R1, 0),
		asm.Mov.Imm(asm.R2, 0),
	)
	insns = append(insns, joinInsns()...)
	return append(insns, asm.Mov.Imm(asm.R0, 0).WithSymbol("done"), asm.Return())
}

// encapInsns: fentry of udp_set_csum(nocheck, skb, ...) and
// udp6_set_csum, which udp_tunnel_xmit_skb and udp_tunnel6_xmit_skb call
// (vxlan, geneve, every UDP tunnel) once the outer UDP header is pushed:
// skb->data is at it. A followed skb's edge says encap, its index the
// UDP destination port, its parent field the 24 bits after the tunnel
// header's first 4 bytes (the VNI of vxlan and geneve alike).
func encapInsns(data int32) asm.Instructions {
	insns := asm.Instructions{asm.LoadMem(asm.R6, asm.R1, 8, asm.DWord)}
	insns = append(insns, followedInsns()...)
	return append(insns,
		asm.Mov.Reg(asm.R9, asm.R0),
		// skb->data, then the UDP header and the tunnel's first 8 bytes.
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, edgeTmp),
		asm.Mov.Imm(asm.R2, 8),
		asm.Mov.Reg(asm.R3, asm.R6),
		asm.Add.Imm(asm.R3, data),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, "done"),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, edgeSegs),
		asm.Mov.Imm(asm.R2, 16),
		asm.LoadMem(asm.R3, asm.RFP, edgeTmp, asm.DWord),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, "done"),
		asm.LoadMem(asm.R1, asm.RFP, edgeSegs+12, asm.Word),
		asm.HostTo(asm.BE, asm.R1, asm.Word),
		asm.RSh.Imm(asm.R1, 8),
		asm.StoreMem(asm.R9, trackPacketOff+8, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, edgeSegs+2, asm.Half),
		asm.HostTo(asm.BE, asm.R1, asm.Half),
		asm.LSh.Imm(asm.R1, 8*edgeIndexOff),
		asm.Or.Imm(asm.R1, EdgeEncap),
		asm.StoreMem(asm.R9, trackPacketOff+16, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("done"),
		asm.Return(),
	)
}

// EdgesMissed says, once, which splits and merges of a packet are not
// followed, given the functions whose helpers attached and the last
// error of one that did not.
func EdgesMissed(attached []string, err error) string {
	var lost []string
	for _, what := range []struct {
		say   string
		funcs []string
	}{
		{"GSO segments", []string{"skb_segment"}},
		{"IPv4 fragments", []string{"ip_frag_next", "ip_fraglist_prepare"}},
		{"IPv6 fragments", []string{"ip6_frag_next", "ip6_fraglist_prepare"}},
		{"reassembled datagrams", []string{"inet_frag_reasm_finish"}},
		{"GRO merges", []string{"skb_gro_receive"}},
		{"UDP tunnel encapsulations", []string{"udp_set_csum"}},
		{"IP tunnel encapsulations", []string{"iptunnel_handle_offloads"}},
	} {
		ok := false
		for _, f := range what.funcs {
			ok = ok || slices.Contains(attached, f)
		}
		if !ok {
			lost = append(lost, what.say)
		}
	}
	if len(lost) == 0 {
		return fmt.Sprintf("packets are followed through their splits and merges, but not every function of them: %v", err)
	}
	why := fmt.Sprintf("the fentry and fexit programs on the functions that make them do not attach (%v)", err)
	if errors.Is(err, os.ErrPermission) {
		why = "this kernel refuses fentry and fexit programs even to root"
	}
	return fmt.Sprintf("%s are not joined to their packet: %s; each is followed as a packet of its own where the filter matches it", strings.Join(lost, ", "), why)
}
