package codegen

import (
	"encoding/binary"
	"net/netip"

	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// addrOperand writes an address-valued expression into the program's
// address slot and returns it; a comparison consumes it at once.
func (g *gen) addrOperand(e lang.Expr) (int16, error) {
	if g.addrSlot == 0 {
		at, err := g.frame.keep(AddrSize)
		if err != nil {
			return 0, err
		}
		g.addrSlot = at
	}
	return g.addrSlot, g.into(e, g.addrSlot, AddrSize)
}

// addrValueInto writes an address at the frame offset at, which into has
// zeroed: a header field, a literal, or ntop().
func (g *gen) addrValueInto(e lang.Expr, at int16) error {
	switch x := lang.Unparen(e).(type) {
	case *lang.Ident:
		if f := g.info.Fields[x]; f != nil {
			return g.addrInto(f, at)
		}
	case *lang.IPLit:
		a := x.Addr.Unmap()
		raw := a.AsSlice()
		for i, b := range raw {
			g.emit(asm.StoreImm(asm.RFP, at+int16(i), int64(b), asm.Byte))
		}
		family := int64(4)
		if a.Is6() {
			family = 6
		}
		g.emit(asm.StoreImm(asm.RFP, at+16, family, asm.Byte))
		return nil
	case *lang.CallExpr:
		if x.Name == "ntop" {
			return g.ntop(x, at)
		}
	}
	return unsupported(e, "this address")
}

// ntop builds an address from a socket's fields: a 4-byte integer as it
// sits in memory (IPv4), or 16 bytes read from a member (IPv6).
func (g *gen) ntop(c *lang.CallExpr, at int16) error {
	arg := c.Args[len(c.Args)-1]
	t := g.info.Types[arg]
	switch {
	case t.Kind == types.Addr:
		return g.into(arg, at, AddrSize)
	case t.IsInt():
		if err := g.expr(arg); err != nil {
			return err
		}
		g.vs.pop(asm.R0)
		g.emit(asm.StoreMem(asm.RFP, at, asm.R0, asm.Word), asm.StoreImm(asm.RFP, at+16, 4, asm.Byte))
		return nil
	}
	if err := g.memberAddr(arg, "ntop of this value; pass a member such as sk->__sk_common.skc_v6_daddr", asm.R3); err != nil {
		return err
	}
	if t.Size == 4 {
		// A 4-byte array, as tracepoints carry IPv4 addresses (saddr[4]).
		g.probeRead(at, 4)
		g.emit(asm.StoreImm(asm.RFP, at+16, 4, asm.Byte))
		return nil
	}
	g.probeRead(at, 16)
	g.emit(asm.StoreImm(asm.RFP, at+16, 6, asm.Byte))
	return nil
}

// addrCompare compiles `addr == literal`, `addr != literal` and
// `addr in prefix`, pushing 1 or 0.
func (g *gen) addrCompare(e *lang.BinaryExpr) error {
	var prefix netip.Prefix
	switch y := lang.Unparen(e.Y).(type) {
	case *lang.IPLit:
		prefix = netip.PrefixFrom(y.Addr, y.Addr.BitLen())
	case *lang.CIDRLit:
		prefix = y.Prefix
	default:
		return g.compareBlobs(e)
	}
	at, err := g.addrOperand(e.X)
	if err != nil {
		return err
	}
	no, done := g.label("addr_no"), g.label("addr_cmp")
	addr := prefix.Addr().Unmap()
	family, width := int32(4), 4
	if addr.Is6() {
		family, width = 6, 16
	}
	raw := addr.AsSlice()
	mask := make([]byte, width)
	for i := 0; i < prefix.Bits(); i++ {
		mask[i/8] |= 0x80 >> (i % 8)
	}
	g.emit(asm.LoadMem(asm.R0, asm.RFP, at+16, asm.Byte), asm.JNE.Imm(asm.R0, family, no))
	// Compare the masked address 8 (or 4) bytes at a time, as the bytes sit
	// in memory, so no byte order conversion is needed.
	for off := 0; off < width; off += 8 {
		n := min(8, width-off)
		var want, m uint64
		if n == 8 {
			want, m = binary.LittleEndian.Uint64(raw[off:]), binary.LittleEndian.Uint64(mask[off:])
		} else {
			want, m = uint64(binary.LittleEndian.Uint32(raw[off:])), uint64(binary.LittleEndian.Uint32(mask[off:]))
		}
		g.emit(
			asm.LoadMem(asm.R0, asm.RFP, at+int16(off), sizeOf(n)),
			asm.LoadImm(asm.R1, int64(m), asm.DWord),
			asm.And.Reg(asm.R0, asm.R1),
			asm.LoadImm(asm.R1, int64(want&m), asm.DWord),
			asm.JNE.Reg(asm.R0, asm.R1, no),
		)
	}
	match, miss := int32(1), int32(0)
	if e.Op == "!=" {
		match, miss = 0, 1
	}
	g.emit(asm.Mov.Imm(asm.R0, match), asm.Ja.Label(done))
	g.emit(asm.Mov.Imm(asm.R0, miss).WithSymbol(no))
	g.mark(done)
	return g.vs.push(asm.R0)
}

// isAddr reports whether an expression is an address.
func (g *gen) isAddr(e lang.Expr) bool { return g.info.Types[e].Kind == types.Addr }
