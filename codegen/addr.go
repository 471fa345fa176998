package codegen

import (
	"encoding/binary"
	"net/netip"

	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// addrOperand writes an address-valued expression (saddr, daddr) into the
// program's address slot and returns it; a comparison consumes it at once.
func (g *gen) addrOperand(e lang.Expr) (int16, error) {
	id, ok := lang.Unparen(e).(*lang.Ident)
	if !ok || g.info.Fields[id] == nil {
		return 0, unsupported(e, "this address")
	}
	if g.addrSlot == 0 {
		at, err := g.frame.alloc(AddrSize)
		if err != nil {
			return 0, err
		}
		g.addrSlot = at
	}
	return g.addrSlot, g.addrInto(g.info.Fields[id], g.addrSlot)
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
		return unsupported(e, "comparing two addresses")
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
