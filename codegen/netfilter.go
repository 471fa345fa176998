package codegen

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/stdlib"
)

// Where a packet is in netfilter is not an argument of any tracepoint: the
// hook's caller (ip_rcv, ip_local_deliver, __ip_local_out...) keeps a
// struct nf_hook_state on its stack while nf_hook_slow runs the hook's
// entries, and a drop (kfree_skb from nf_hook_slow, or from nft_do_chain
// itself) happens with that frame live above the tracepoint's. nfScan
// finds it by reading the stack upward from the probe's context for the
// packet's network namespace
// pointer at the state's net member, and accepts it only if the bytes
// before it are a hook number and a protocol family, and in or out is the
// skb's device. From the state, the namespace's hook entries name the
// nftables chain or iptables table that registered the hook.

// nfScanBytes is how far above the context the state is looked for: the
// frames between are the tracing machinery's, nftables' and nf_hook_slow's.
const nfScanBytes = 2048

// NetfilterHookFuncs are the hook functions nftables (kind 1: priv is a
// struct nft_chain) and iptables (kind 2: priv is a struct xt_table)
// register; their addresses come from Options.Ksym.
var NetfilterHookFuncs = map[string]int{
	"nft_do_chain_ipv4": 1, "nft_do_chain_ipv6": 1, "nft_do_chain_inet": 1, "nft_do_chain_inet_ingress": 1,
	"nft_do_chain_arp": 1, "nft_do_chain_bridge": 1, "nft_do_chain_netdev": 1,
	"nf_route_table_hook4": 1, "nf_route_table_hook6": 1, "nf_route_table_inet": 1,
	"ipt_do_table": 2, "ip6t_do_table": 2, "arpt_do_table": 2,
	"iptable_mangle_hook": 2, "ip6table_mangle_hook": 2,
}

// Kinds of the table found at the hook.
const (
	nfNone  = 0
	nfNft   = 1
	nfXt    = 2
	nfMany  = 3
	maxHook = 8 // entries looked at, per hook
)

// nfSlots are the frame slots of what nfScan finds.
type nfSlots struct {
	state, net, dev, sk, fp, i, q, cand, hook, pf, kind, priv, n, e int16
}

// nfScan fills the netfilter slots, once per program, ahead of the code
// that reads them.
func (g *gen) nfScan() error {
	g.nf = &nfSlots{}
	s := g.nf
	for _, p := range []*int16{&s.state, &s.net, &s.dev, &s.sk, &s.fp, &s.i, &s.q, &s.cand, &s.hook, &s.pf, &s.kind, &s.priv, &s.n, &s.e} {
		off, err := g.frame.keep(8)
		if err != nil {
			return err
		}
		*p = off
	}
	l := g.info.Netfilter
	done := g.label("nf_done")
	for _, p := range []int16{s.state, s.net, s.dev, s.q, s.kind, s.priv, s.pf, s.hook} {
		g.emit(zero8(p)...)
	}
	g.emit(asm.StoreImm(asm.RFP, s.hook, stdlib.NoHook, asm.Word))
	devOff, err := skbOffset(g.info.SkbType, "dev")
	if err != nil {
		return err
	}
	skOff, err := skbOffset(g.info.SkbType, "sk")
	if err != nil {
		return err
	}
	// The namespace: the device's, or the socket's on the local output path.
	if err := g.skbPtrOr(done); err != nil {
		return err
	}
	g.vs.pop(asm.R3)
	g.emit(asm.StoreMem(asm.RFP, s.cand, asm.R3, asm.DWord), asm.Add.Imm(asm.R3, devOff))
	g.probeRead(s.dev, 8)
	fromSk, haveNet := g.label("nf_sk"), g.label("nf_net")
	g.emit(asm.LoadMem(asm.R3, asm.RFP, s.dev, asm.DWord), asm.JEq.Imm(asm.R3, 0, fromSk), asm.Add.Imm(asm.R3, int32(l.DevNet)))
	g.probeRead(s.net, 8)
	g.emit(asm.Ja.Label(haveNet))
	g.emit(asm.LoadMem(asm.R3, asm.RFP, s.cand, asm.DWord).WithSymbol(fromSk), asm.Add.Imm(asm.R3, skOff))
	g.probeRead(s.sk, 8)
	g.emit(asm.LoadMem(asm.R3, asm.RFP, s.sk, asm.DWord), asm.JEq.Imm(asm.R3, 0, done), asm.Add.Imm(asm.R3, int32(l.SkNet)))
	g.probeRead(s.net, 8)
	g.mark(haveNet)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, s.net, asm.DWord), asm.JEq.Imm(asm.R0, 0, done))
	// Where to start: the context's address, as a number (spilled, then
	// read back as bytes). The tracepoint's arguments and the kprobe's
	// registers are on the kernel stack, in the tracing machinery's frames
	// below the hook's; the program's own frame may not be (a per-CPU
	// private stack, since Linux 6.14).
	g.emit(asm.StoreMem(asm.RFP, s.fp, asm.R9, asm.DWord), asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, int32(s.fp)))
	g.probeRead(s.fp, 8)
	loop, next, found := g.label("nf_loop"), g.label("nf_next"), g.label("nf_found")
	bySk, miss := g.label("nf_by_sk"), g.label("nf_miss")
	g.emit(zero8(s.i)...)
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, s.i, asm.DWord).WithSymbol(loop),
		asm.JGE.Imm(asm.R0, nfScanBytes, done),
		asm.LoadMem(asm.R3, asm.RFP, s.fp, asm.DWord),
		asm.Add.Reg(asm.R3, asm.R0),
	)
	g.probeRead(s.q, 8)
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, s.q, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, s.net, asm.DWord),
		asm.JNE.Reg(asm.R0, asm.R1, next),
		// A candidate: the state would start StateNet bytes before.
		asm.LoadMem(asm.R3, asm.RFP, s.fp, asm.DWord),
		asm.LoadMem(asm.R0, asm.RFP, s.i, asm.DWord),
		asm.Add.Reg(asm.R3, asm.R0),
		asm.Add.Imm(asm.R3, -int32(l.StateNet)),
		asm.StoreMem(asm.RFP, s.cand, asm.R3, asm.DWord),
	)
	g.emit(zero8(s.q)...)
	g.probeRead(s.q, 8)
	pfOK := g.label("nf_pf")
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, s.q, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.And.Imm(asm.R0, 0xff),
		asm.JGT.Imm(asm.R0, 5, next),
		asm.RSh.Imm(asm.R1, 8),
		asm.And.Imm(asm.R1, 0xff),
	)
	for _, pf := range []int32{2, 10, 3, 7, 5} { // ipv4, ipv6, arp, bridge, netdev
		g.emit(asm.JEq.Imm(asm.R1, pf, pfOK))
	}
	g.emit(asm.Ja.Label(next))
	g.emit(
		asm.StoreMem(asm.RFP, s.hook, asm.R0, asm.DWord).WithSymbol(pfOK),
		asm.StoreMem(asm.RFP, s.pf, asm.R1, asm.DWord),
		asm.LoadMem(asm.R0, asm.RFP, s.dev, asm.DWord),
		asm.JEq.Imm(asm.R0, 0, bySk),
	)
	for _, off := range []uint32{l.StateIn, l.StateOut} {
		g.emit(zero8(s.q)...)
		g.emit(asm.LoadMem(asm.R3, asm.RFP, s.cand, asm.DWord), asm.Add.Imm(asm.R3, int32(off)))
		g.probeRead(s.q, 8)
		g.emit(asm.LoadMem(asm.R0, asm.RFP, s.q, asm.DWord), asm.LoadMem(asm.R1, asm.RFP, s.dev, asm.DWord), asm.JEq.Reg(asm.R0, asm.R1, found))
	}
	// Without a device (local output), the state's socket is the skb's:
	// a stale state lower on the stack, of another packet of the
	// namespace, is not taken for this one's.
	g.emit(asm.Ja.Label(miss))
	g.emit(zero8(s.q)[0].WithSymbol(bySk))
	g.emit(asm.LoadMem(asm.R3, asm.RFP, s.cand, asm.DWord), asm.Add.Imm(asm.R3, int32(l.StateSk)))
	g.probeRead(s.q, 8)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, s.q, asm.DWord), asm.LoadMem(asm.R1, asm.RFP, s.sk, asm.DWord), asm.JEq.Reg(asm.R0, asm.R1, found))
	g.emit(
		asm.StoreImm(asm.RFP, s.hook, stdlib.NoHook, asm.Word).WithSymbol(miss),
		asm.LoadMem(asm.R0, asm.RFP, s.i, asm.DWord).WithSymbol(next),
		asm.Add.Imm(asm.R0, 8),
		asm.StoreMem(asm.RFP, s.i, asm.R0, asm.DWord),
		asm.Ja.Label(loop),
	)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, s.cand, asm.DWord).WithSymbol(found), asm.StoreMem(asm.RFP, s.state, asm.R0, asm.DWord))
	if g.usesTables {
		g.nfTable(done)
	}
	g.mark(done)
	return nil
}

// nfTable looks at the hook's entries in the namespace, and records in
// kind and priv the one nftables chain or iptables table among them (or
// nfMany where there are several: which of them dropped is not kept).
func (g *gen) nfTable(done string) {
	s, l := g.nf, g.info.Netfilter
	have := g.label("nf_family")
	g.emit(asm.LoadMem(asm.R1, asm.RFP, s.hook, asm.DWord), asm.LoadMem(asm.R2, asm.RFP, s.pf, asm.DWord))
	for _, pf := range slices.Sorted(maps.Keys(l.Hooks)) {
		off := l.Hooks[pf]
		skip := g.label("nf_pf")
		g.emit(
			asm.JNE.Imm(asm.R2, int32(pf), skip),
			asm.JGE.Imm(asm.R1, int32(l.HookCount[pf]), done),
			asm.LSh.Imm(asm.R1, 3),
			asm.Add.Imm(asm.R1, int32(off)),
			asm.Ja.Label(have),
		)
		g.mark(skip)
	}
	g.emit(asm.Ja.Label(done))
	g.emit(
		asm.LoadMem(asm.R3, asm.RFP, s.net, asm.DWord).WithSymbol(have),
		asm.Add.Reg(asm.R3, asm.R1),
	)
	g.probeRead(s.e, 8)
	g.emit(asm.LoadMem(asm.R3, asm.RFP, s.e, asm.DWord), asm.JEq.Imm(asm.R3, 0, done))
	g.emit(zero8(s.n)...)
	g.probeRead(s.n, 2)
	counted := g.label("nf_counted")
	for j := 0; j < maxHook; j++ {
		nextJ := g.label("nf_entry")
		g.emit(asm.LoadMem(asm.R0, asm.RFP, s.n, asm.DWord), asm.JLE.Imm(asm.R0, int32(j), counted))
		g.emit(asm.LoadMem(asm.R3, asm.RFP, s.e, asm.DWord), asm.Add.Imm(asm.R3, int32(l.EntryHooks)+int32(16*j)))
		g.probeRead(s.q, 8)
		g.emit(asm.LoadMem(asm.R0, asm.RFP, s.q, asm.DWord))
		for _, kind := range []int32{nfNft, nfXt} {
			if (kind == nfNft && !l.Nft) || (kind == nfXt && !l.Xt) {
				continue // not in this kernel, or its module is not loaded
			}
			hit := g.label("nf_hit")
			any := false
			// In name order: the same script compiles to the same program.
			for _, name := range slices.Sorted(maps.Keys(NetfilterHookFuncs)) {
				if int32(NetfilterHookFuncs[name]) != kind || g.ksym == nil {
					continue
				}
				if a := g.ksym(name); a != 0 {
					g.emit(asm.LoadImm(asm.R1, int64(a), asm.DWord), asm.JEq.Reg(asm.R0, asm.R1, hit))
					any = true
				}
			}
			if !any {
				continue
			}
			miss := g.label("nf_miss")
			g.emit(asm.Ja.Label(miss))
			// A second table at the hook makes it ambiguous.
			many := g.label("nf_many")
			g.emit(
				asm.LoadMem(asm.R1, asm.RFP, s.kind, asm.DWord).WithSymbol(hit),
				asm.JNE.Imm(asm.R1, 0, many),
				asm.StoreImm(asm.RFP, s.kind, int64(kind), asm.Word),
				asm.LoadMem(asm.R3, asm.RFP, s.e, asm.DWord),
				asm.Add.Imm(asm.R3, int32(l.EntryHooks)+int32(16*j)+8),
			)
			g.probeRead(s.priv, 8)
			g.emit(asm.Ja.Label(nextJ))
			g.emit(asm.StoreImm(asm.RFP, s.kind, nfMany, asm.Word).WithSymbol(many), asm.Ja.Label(nextJ))
			g.mark(miss)
		}
		g.mark(nextJ)
	}
	g.mark(counted)
}

// nfHook pushes hook.
func (g *gen) nfHook() error {
	if g.nf == nil {
		return fmt.Errorf("hook: the netfilter state was not looked for")
	}
	g.emit(asm.LoadMem(asm.R0, asm.RFP, g.nf.hook, asm.DWord))
	return g.vs.push(asm.R0)
}

// xtChains are iptables' built-in chains, by hook.
var xtChains = []string{"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"}

// nfName writes table or chain at the zeroed `size` bytes at.
func (g *gen) nfName(name string, at int16, size int) error {
	if g.nf == nil {
		return fmt.Errorf("%s: the netfilter state was not looked for", name)
	}
	s, l := g.nf, g.info.Netfilter
	done, nft, xt := g.label("nf_name_done"), g.label("nf_nft"), g.label("nf_xt")
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, s.kind, asm.DWord),
		asm.JEq.Imm(asm.R0, nfNft, nft),
		asm.JEq.Imm(asm.R0, nfXt, xt),
		asm.JNE.Imm(asm.R0, nfMany, done),
	)
	g.storeString(at, size, "?")
	g.emit(asm.Ja.Label(done))
	// nftables: chain->name, chain->table->name, both pointers.
	g.emit(asm.LoadMem(asm.R3, asm.RFP, s.priv, asm.DWord).WithSymbol(nft))
	if name == "table" {
		g.emit(asm.Add.Imm(asm.R3, int32(l.ChainTable)))
		g.probeRead(s.q, 8)
		g.emit(asm.LoadMem(asm.R3, asm.RFP, s.q, asm.DWord), asm.Add.Imm(asm.R3, int32(l.TableName)))
	} else {
		g.emit(asm.Add.Imm(asm.R3, int32(l.ChainName)))
	}
	g.probeRead(s.q, 8)
	g.emit(asm.LoadMem(asm.R3, asm.RFP, s.q, asm.DWord))
	g.readString(at, size)
	g.emit(asm.Ja.Label(done))
	// iptables: the table's name is an array in it; the chain is the hook's.
	g.mark(xt)
	if name == "table" {
		g.emit(asm.LoadMem(asm.R3, asm.RFP, s.priv, asm.DWord), asm.Add.Imm(asm.R3, int32(l.XtName)))
		g.readString(at, size)
	} else {
		g.emit(asm.LoadMem(asm.R1, asm.RFP, s.hook, asm.DWord))
		for h, c := range xtChains {
			skip := g.label("nf_hookname")
			g.emit(asm.JNE.Imm(asm.R1, int32(h), skip))
			g.storeString(at, size, c)
			g.emit(asm.Ja.Label(done))
			g.mark(skip)
		}
	}
	g.mark(done)
	return nil
}

// storeString writes a constant string at the frame offset at.
func (g *gen) storeString(at int16, size int, s string) {
	for i := 0; i < len(s) && i < size-1; i++ {
		g.emit(asm.StoreImm(asm.RFP, at+int16(i), int64(s[i]), asm.Byte))
	}
}
