package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// SlotSize is the bytes a value of type t takes in a record, a map key or
// value, or a variable: 8 for integers, pointers and stack ids, strings
// rounded up to 8, AddrSize for addresses.
func SlotSize(t types.Type) int {
	switch t.Kind {
	case types.String, types.Array, types.Struct:
		return (t.Size + 7) &^ 7
	case types.Addr:
		return AddrSize
	case types.Endpoint:
		return EndpointSize
	case types.Packet:
		return PacketSize
	case types.Tuple:
		return tupleSize(t)
	}
	return 8
}

// EndpointSize is the size of an endpoint value: an address (AddrSize
// bytes), then the port as a u64.
const EndpointSize = AddrSize + 8

// endpointInto writes endpoint(addr, port) at the zeroed slot at.
func (g *gen) endpointInto(e lang.Expr) func(at int16) error {
	return func(at int16) error {
		c, ok := lang.Unparen(e).(*lang.CallExpr)
		if !ok || c.Name != "endpoint" {
			return unsupported(e, "this endpoint")
		}
		if err := g.into(c.Args[0], at, AddrSize); err != nil {
			return err
		}
		if err := g.expr(c.Args[1]); err != nil {
			return err
		}
		g.vs.pop(asm.R0)
		g.fit(asm.R0, types.U16)
		g.emit(asm.StoreMem(asm.RFP, at+AddrSize, asm.R0, asm.DWord))
		return nil
	}
}

// inReg reports whether values of t are computed in a register: integers,
// pointers and stack ids. Strings and addresses are written to the frame.
func inReg(t types.Type) bool { return t.IsScalar() || t.Kind == types.Stack }

// into writes the value of e, of any storable type, at the frame offset at;
// size is the slot's size, which for a string may exceed the value's.
func (g *gen) into(e lang.Expr, at int16, size int) error {
	t := g.info.Types[e]
	if inReg(t) {
		if err := g.expr(e); err != nil {
			return err
		}
		g.vs.pop(asm.R0)
		g.emit(asm.StoreMem(asm.RFP, at, asm.R0, asm.DWord))
		return nil
	}
	g.zero(at, g.mayLeave(e, size))
	switch x := lang.Unparen(e).(type) {
	case *lang.VarExpr:
		g.copyFrame(at, g.vars[x.Name], min(size, SlotSize(g.info.Types[x])))
		return nil
	case *lang.MapExpr:
		return g.mapReadInto(x, at, size)
	case *lang.CondExpr:
		// Both branches write the same slot.
		if t.Kind == types.Tuple {
			return g.ifElse(x.Cond, func() error { return g.intoType(x.Then, at, t) }, func() error { return g.intoType(x.Else, at, t) })
		}
		return g.ifElse(x.Cond, func() error { return g.into(x.Then, at, size) }, func() error { return g.into(x.Else, at, size) })
	case *lang.FieldExpr:
		if _, ok := g.info.TupleElems[x]; ok {
			return g.elemInto(x, at, size)
		}
	case *lang.IndexExpr:
		if fe := g.info.TupleIdx[x]; fe != nil {
			return g.elemInto(fe, at, size)
		}
	case *lang.TupleExpr:
		return g.intoType(x, at, t)
	case *lang.CastExpr:
		if x.Type == "string" {
			// (string[N])s: the string, its tail zeros.
			return g.into(x.X, at, size)
		}
		if x.Array {
			return g.arrayCastInto(x, at)
		}
	case *lang.CallExpr:
		if _, known := g.info.Consts[x]; !known && (x.Name == "strerror" || x.Name == "signal_name" || x.Name == "syscall_name") {
			return g.tableString(x, at, size)
		}
		if x.Name == "username" || x.Name == "cgroup_path" {
			return g.nameString(x, at, size)
		}
		if x.Name == "rule" {
			// A record of the arguments; user space names the rule.
			// Its flow (addresses and ports, from the fifth on) is kept
			// only for the nftables trace (Options.RuleFlows); without
			// it the source address keeps its family alone (the
			// address zero), which tells iptables-legacy's IPv4 tables
			// from its IPv6 ones.
			parts := TupleLayout(t)
			for i, a := range x.Args {
				p := at + int16(parts[i].Offset)
				if i > ruleFlowArg && !g.maps.ruleFlows {
					g.zeroBytes(p, parts[i].Size)
					continue
				}
				if err := g.into(a, p, parts[i].Size); err != nil {
					return err
				}
				if i == ruleFlowArg && !g.maps.ruleFlows {
					g.zeroBytes(p, addrFamilyOff)
				}
			}
			return nil
		}
	}
	switch t.Kind {
	case types.String:
		return g.stringInto(e, at, size)
	case types.Addr:
		return g.addrValueInto(e, at)
	case types.Endpoint:
		return g.endpointInto(e)(at)
	case types.Packet:
		return g.packetInto(at)
	case types.Array:
		return g.arrayInto(e, at, size)
	case types.Struct:
		return g.structInto(e, at, size)
	}
	return unsupported(e, "a "+t.String()+" value")
}

// ruleFlowArg is rule()'s first argument of the flow: saddr, sport,
// daddr, dport.
const ruleFlowArg = 4

// zeroBytes clears size bytes at the frame offset at, any size.
func (g *gen) zeroBytes(at int16, size int) {
	for off := 0; off < size; {
		switch {
		case size-off >= 8 && (int(at)+off)%8 == 0:
			g.emit(storeImm64(at+int16(off), 0))
			off += 8
		case size-off >= 4 && (int(at)+off)%4 == 0:
			g.emit(asm.StoreImm(asm.RFP, at+int16(off), 0, asm.Word))
			off += 4
		case size-off >= 2 && (int(at)+off)%2 == 0:
			g.emit(asm.StoreImm(asm.RFP, at+int16(off), 0, asm.Half))
			off += 2
		default:
			g.emit(asm.StoreImm(asm.RFP, at+int16(off), 0, asm.Byte))
			off++
		}
	}
}

// zero clears size bytes (a multiple of 8) at the frame offset at.
func (g *gen) zero(at int16, size int) {
	for off := 0; off < size; off += 8 {
		g.emit(zero8(at + int16(off))...)
	}
}

// copyFrame copies n bytes (a multiple of 8) between frame slots.
func (g *gen) copyFrame(dst, src int16, n int) {
	for off := int16(0); off < int16(n); off += 8 {
		g.emit(asm.LoadMem(asm.R0, asm.RFP, src+off, asm.DWord), asm.StoreMem(asm.RFP, dst+off, asm.R0, asm.DWord))
	}
}

// blobEqual compares the first n bytes of two frame slots (8 at a time,
// a partial last word masked) and pushes 1 when they are equal (0 for !=,
// which inverts it).
func (g *gen) blobEqual(a, b int16, n int, op string) error {
	no, done := g.label("ne"), g.label("eq")
	for off := 0; off < n; off += 8 {
		g.emit(
			asm.LoadMem(asm.R0, asm.RFP, a+int16(off), asm.DWord),
			asm.LoadMem(asm.R1, asm.RFP, b+int16(off), asm.DWord),
		)
		if k := n - off; k < 8 {
			// Only the first k bytes count: the low ones, in memory order.
			g.emit(
				asm.LoadImm(asm.R2, int64(uint64(1)<<(8*k)-1), asm.DWord),
				asm.And.Reg(asm.R0, asm.R2),
				asm.And.Reg(asm.R1, asm.R2),
			)
		}
		g.emit(asm.JNE.Reg(asm.R0, asm.R1, no))
	}
	match, miss := int32(1), int32(0)
	if op == "!=" {
		match, miss = 0, 1
	}
	g.emit(asm.Mov.Imm(asm.R0, match), asm.Ja.Label(done))
	g.emit(asm.Mov.Imm(asm.R0, miss).WithSymbol(no))
	g.mark(done)
	return g.vs.push(asm.R0)
}

// compareBlobs compiles == and != between two strings or two addresses:
// both are written to slots of the larger size and compared.
func (g *gen) compareBlobs(e *lang.BinaryExpr) error {
	n := max(SlotSize(g.info.Types[e.X]), SlotSize(g.info.Types[e.Y]))
	return g.compareWritten(n, e.Op, func(at int16) error { return g.into(e.X, at, n) }, func(at int16) error { return g.into(e.Y, at, n) })
}

// compareWritten compiles == or != (op) of two values that x and y write
// into slots of n bytes, compared byte for byte.
func (g *gen) compareWritten(n int, op string, x, y func(at int16) error) error {
	a, err := g.frame.alloc(n)
	if err != nil {
		return err
	}
	b, err := g.frame.alloc(n)
	if err != nil {
		return err
	}
	if err := x(a); err != nil {
		return err
	}
	if err := y(b); err != nil {
		return err
	}
	return g.blobEqual(a, b, n, op)
}

// mayLeave is how many bytes from the start of a slot of size bytes
// writing e's value may leave unwritten, which into zeroes first: none for
// comm, which bpf_get_current_comm pads with zeros to the size it is given
// (16 at most); the address for a header address, whose family goes in as
// 8 bytes; else all of them.
func (g *gen) mayLeave(e lang.Expr, size int) int {
	id, ok := lang.Unparen(e).(*lang.Ident)
	if !ok {
		return size
	}
	f := g.info.Fields[id]
	switch {
	case f == nil:
		return size
	case f.Name == "comm" && f.Src.Kind == stdlib.SrcContext && size <= 16:
		return 0
	case f.Src.Kind == stdlib.SrcHeader && g.info.Types[e].Kind == types.Addr && size == AddrSize:
		return 16
	}
	return size
}
