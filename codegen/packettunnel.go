package codegen

import "github.com/cilium/ebpf/asm"

// IP tunnels (gre, ipip, sit, ip6tnl, ip6gre) push their outer headers
// onto the skb they are given, as the UDP ones do, but no function after
// the push is theirs alone on every kernel: iptunnel_xmit, where IPv4's
// outer header goes on, has 10 arguments (11 from 6.16), more than the
// trampolines of x86 before 6.5 and of arm64 take, and IPv6's
// ip6tunnel_xmit is inline. iptunnel_handle_offloads(skb, gso_type_mask),
// in vmlinux from 5.10 to 7.x, is what every one of them calls just
// before it pushes them, with the GSO type its outer headers make: that
// mask names the tunnel.

// The skb_gso_type bits iptunnel_handle_offloads is given (the same in
// every kernel since 4.8): GRE, IP in IPv4, IP in IPv6. UDP tunnels
// (SKB_GSO_UDP_TUNNEL, 1<<10 and 1<<11) are encapInsns' (udp_set_csum),
// which also reads their VNI.
const (
	gsoGRE     = 1<<6 | 1<<7 // SKB_GSO_GRE, SKB_GSO_GRE_CSUM
	gsoIPXIP4  = 1 << 8
	gsoIPXIP6  = 1 << 9
	ipprotoGRE = 47
)

// TunnelOuter6 is set in an IP tunnel's encap edge count where the outer
// header is IPv6 (ip6tnl); the low byte is the outer header's protocol.
const TunnelOuter6 = 0x100

// ipTunnelInsns: fentry of iptunnel_handle_offloads(skb, gso_type_mask).
// A followed skb's edge says encap with index 0 (no UDP port) and, as its
// count, the outer header's protocol: 47 for GRE; for IP in IP the inner
// packet's (skb->protocol, not yet the outer's): 4 (ipip, ip4ip6), 41
// (sit, ip6ip6), 137 (MPLS), 0 for another; TunnelOuter6 added where
// the outer header is IPv6. The skbs it made by splits so far stay.
func ipTunnelInsns(protocol int32) asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord),
		asm.LoadMem(asm.R7, asm.R1, 8, asm.DWord),
		asm.Mov.Reg(asm.R8, asm.R7),
		asm.And.Imm(asm.R8, gsoGRE|gsoIPXIP4|gsoIPXIP6),
		asm.JEq.Imm(asm.R8, 0, "done"),
	}
	insns = append(insns, followedInsns()...)
	return append(insns,
		asm.Mov.Reg(asm.R9, asm.R0),
		asm.Mov.Imm(asm.R1, ipprotoGRE),
		asm.JSet.Imm(asm.R7, gsoGRE, "store"),
		asm.Mov.Imm(asm.R8, 0),
		asm.JSet.Imm(asm.R7, gsoIPXIP4, "inner"),
		asm.Mov.Imm(asm.R8, TunnelOuter6),
		// The inner packet's ethertype, big-endian.
		asm.Mov.Reg(asm.R1, asm.RFP).WithSymbol("inner"),
		asm.Add.Imm(asm.R1, edgeTmp),
		asm.Mov.Imm(asm.R2, 2),
		asm.Mov.Reg(asm.R3, asm.R6),
		asm.Add.Imm(asm.R3, protocol),
		asm.FnProbeReadKernel.Call(),
		asm.LoadMem(asm.R2, asm.RFP, edgeTmp, asm.Half),
		asm.HostTo(asm.BE, asm.R2, asm.Half),
		asm.Mov.Imm(asm.R1, 4),
		asm.JEq.Imm(asm.R2, 0x0800, "outer"),
		asm.Mov.Imm(asm.R1, 41),
		asm.JEq.Imm(asm.R2, 0x86dd, "outer"),
		asm.Mov.Imm(asm.R1, 137),
		asm.JEq.Imm(asm.R2, 0x8847, "outer"),
		asm.Mov.Imm(asm.R1, 0),
		asm.Or.Reg(asm.R1, asm.R8).WithSymbol("outer"),
		// edge = encap | spawned << 16 | count << 48; no parent.
		asm.LSh.Imm(asm.R1, 8*edgeCountOff).WithSymbol("store"),
		asm.Or.Imm(asm.R1, EdgeEncap),
		asm.LoadMem(asm.R2, asm.R9, trackPacketOff+16+edgeSpawnOff, asm.Half),
		asm.LSh.Imm(asm.R2, 8*edgeSpawnOff),
		asm.Or.Reg(asm.R1, asm.R2),
		asm.StoreMem(asm.R9, trackPacketOff+16, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R2, 0),
		asm.StoreMem(asm.R9, trackPacketOff+8, asm.R2, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("done"),
		asm.Return(),
	)
}
