// Package bpfprogtest builds the packet programs that tests of skbtrace's
// bpf: probes load and trace: a tc, an XDP and a cgroup_skb program that
// drop UDP datagrams to one port and pass the rest, written with cilium/ebpf's asm
// (no clang) and carrying BTF for their function, which fentry on a BPF
// program needs. The VM suite's guest helper (test/vm/bpfload) loads the
// same programs.
package bpfprogtest

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// Verdicts the programs return.
const (
	TCActOK   = 0
	TCActShot = 2
	XDPDrop   = 1
	XDPPass   = 2
	SKDrop    = 0
	SKPass    = 1
)

// TCDropPort is a tc (sched_cls, direct action) program called name that
// returns TC_ACT_SHOT for an IPv4 UDP datagram to port and TC_ACT_OK for
// anything else. Its function's BTF is `int name(struct __sk_buff *skb)`.
func TCDropPort(name string, port uint16) *ebpf.ProgramSpec {
	// struct __sk_buff's data and data_end.
	return dropPort(name, ebpf.SchedCLS, "__sk_buff", "skb", 76, 80, 14, TCActShot, TCActOK, port)
}

// CgroupSkbDropPort is a cgroup_skb program called name that returns 0
// (SK_DROP) for an IPv4 UDP datagram to port and 1 (SK_PASS) for anything
// else, its packet starting at the IP header. Attached to a cgroup's
// egress, the sender's datagram is dropped (sendmsg: EPERM). Its
// function's BTF is `int name(struct __sk_buff *skb)`.
func CgroupSkbDropPort(name string, port uint16) *ebpf.ProgramSpec {
	return dropPort(name, ebpf.CGroupSKB, "__sk_buff", "skb", 76, 80, 0, SKDrop, SKPass, port)
}

// XDPDropPort is an XDP program called name that returns XDP_DROP for an
// IPv4 UDP datagram to port and XDP_PASS for anything else. Its function's
// BTF is `int name(struct xdp_md *ctx)`.
func XDPDropPort(name string, port uint16) *ebpf.ProgramSpec {
	// struct xdp_md's data and data_end.
	return dropPort(name, ebpf.XDP, "xdp_md", "ctx", 0, 4, 14, XDPDrop, XDPPass, port)
}

// dropPort reads the packet by direct packet access: Ethernet (l2 is 14;
// 0 where the packet starts at the IP header), an IPv4 header without
// options, UDP.
func dropPort(name string, typ ebpf.ProgramType, ctxStruct, param string, dataOff, endOff, l2 int16, drop, pass int32, port uint16) *ebpf.ProgramSpec {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R0, pass),
		asm.LoadMem(asm.R2, asm.R1, dataOff, asm.Word),
		asm.LoadMem(asm.R3, asm.R1, endOff, asm.Word),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, int32(l2)+20+8),
		asm.JGT.Reg(asm.R4, asm.R3, "out"),
	}
	if l2 > 0 {
		// EtherType IPv4 (0x0800 in network order).
		insns = append(insns, asm.LoadMem(asm.R4, asm.R2, 12, asm.Half), asm.JNE.Imm(asm.R4, 0x0008, "out"))
	}
	insns = append(insns,
		// Version 4, IHL 5.
		asm.LoadMem(asm.R4, asm.R2, l2, asm.Byte),
		asm.JNE.Imm(asm.R4, 0x45, "out"),
		asm.LoadMem(asm.R4, asm.R2, l2+9, asm.Byte),
		asm.JNE.Imm(asm.R4, 17, "out"),
		asm.LoadMem(asm.R4, asm.R2, l2+20+2, asm.Half),
		asm.JNE.Imm(asm.R4, int32(port>>8|port<<8&0xff00), "out"),
		asm.Mov.Imm(asm.R0, drop),
		asm.Return().WithSymbol("out"),
	)
	ctx := &btf.Struct{Name: ctxStruct}
	proto := &btf.FuncProto{
		Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
		Params: []btf.FuncParam{{Name: param, Type: &btf.Pointer{Target: ctx}}},
	}
	insns[0] = btf.WithFuncMetadata(insns[0], &btf.Func{Name: name, Type: proto, Linkage: btf.GlobalFunc})
	return &ebpf.ProgramSpec{Name: name, Type: typ, License: "GPL", Instructions: insns}
}
