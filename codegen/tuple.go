package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// A tuple (or record) is its elements one after the other, each in its
// SlotSize: the layout of a map key of those types (KeyLayout), so that
// a tuple is a multi-key map's key as it is, and a map loop's (key,
// value) is the map's key followed by its value.

// TupleLayout places a tuple's elements: each at an offset, in its
// SlotSize.
func TupleLayout(t types.Type) []EventArg {
	var parts []EventArg
	off := 0
	for _, e := range t.Tuple.Elems {
		n := SlotSize(e)
		parts = append(parts, EventArg{Type: e, Offset: off, Size: n})
		off += n
	}
	return parts
}

// tupleSize is the bytes a tuple takes: its elements' slots.
func tupleSize(t types.Type) int {
	n := 0
	for _, e := range t.Tuple.Elems {
		n += SlotSize(e)
	}
	return n
}

// sameLayout reports whether values of a and b take the same bytes the
// same way, so that one is copied as the other.
func sameLayout(a, b types.Type) bool {
	if a.Kind != types.Tuple || b.Kind != types.Tuple {
		return a.Kind == b.Kind && SlotSize(a) == SlotSize(b)
	}
	if len(a.Tuple.Elems) != len(b.Tuple.Elems) {
		return false
	}
	for i := range a.Tuple.Elems {
		if !sameLayout(a.Tuple.Elems[i], b.Tuple.Elems[i]) {
			return false
		}
	}
	return true
}

// intoType writes the value of e at the frame offset at, as a value of
// type dst: a tuple element by element (a string element to its slot in
// dst, which may be larger than e's), anything else as into does.
func (g *gen) intoType(e lang.Expr, at int16, dst types.Type) error {
	if dst.Kind != types.Tuple {
		return g.into(e, at, SlotSize(dst))
	}
	src := g.info.Types[e]
	if t, ok := lang.Unparen(e).(*lang.TupleExpr); ok {
		parts := TupleLayout(dst)
		for i, x := range t.Elems {
			// Evaluated as written; a record's field goes to the
			// place of its name in dst.
			j := recordPlace(dst, src, i)
			if err := g.intoType(x, at+int16(parts[j].Offset), parts[j].Type); err != nil {
				return err
			}
		}
		return nil
	}
	if sameLayout(src, dst) {
		return g.into(e, at, SlotSize(dst))
	}
	// Another layout (a variable's, widened by another assignment):
	// written as it is, then copied element by element.
	tmp, err := g.frame.alloc(SlotSize(src))
	if err != nil {
		return err
	}
	if err := g.into(e, tmp, SlotSize(src)); err != nil {
		return err
	}
	g.zero(at, SlotSize(dst))
	g.convertBlob(at, dst, tmp, src)
	return nil
}

// convertBlob copies a value of type src at the frame offset from into the
// zeroed slot of type dst at to: element by element for tuples, the
// smaller of the two sizes for the rest.
func (g *gen) convertBlob(to int16, dst types.Type, from int16, src types.Type) {
	if dst.Kind != types.Tuple || src.Kind != types.Tuple {
		g.copyFrame(to, from, min(SlotSize(dst), SlotSize(src)))
		return
	}
	dp, sp := TupleLayout(dst), TupleLayout(src)
	for i := range sp {
		j := recordPlace(dst, src, i)
		g.convertBlob(to+int16(dp[j].Offset), dp[j].Type, from+int16(sp[i].Offset), sp[i].Type)
	}
}

// recordPlace is the index in dst of src's element i: the field of the
// same name where both are records (bpftrace's (b=1, a=2) stored where
// (a, b) is), else i.
func recordPlace(dst, src types.Type, i int) int {
	if dst.Tuple == nil || src.Tuple == nil || dst.Tuple.Names == nil || src.Tuple.Names == nil || i >= len(src.Tuple.Names) {
		return i
	}
	if j := dst.Tuple.Field(src.Tuple.Names[i]); j >= 0 {
		return j
	}
	return i
}

// tupleAddr returns the frame offset of the tuple value e: a variable's
// slot, an element's place in its tuple, or a slot it is written to.
func (g *gen) tupleAddr(e lang.Expr) (int16, error) {
	switch x := lang.Unparen(e).(type) {
	case *lang.VarExpr:
		if slot, ok := g.vars[x.Name]; ok {
			return slot, nil
		}
	case *lang.IndexExpr:
		if fe := g.info.TupleIdx[x]; fe != nil {
			return g.tupleAddr(fe)
		}
	case *lang.FieldExpr:
		if i, ok := g.info.TupleElems[x]; ok {
			base, err := g.tupleAddr(x.X)
			if err != nil {
				return 0, err
			}
			return base + int16(TupleLayout(g.info.Types[x.X])[i].Offset), nil
		}
	}
	t := g.info.Types[e]
	tmp, err := g.frame.alloc(SlotSize(t))
	if err != nil {
		return 0, err
	}
	return tmp, g.into(e, tmp, SlotSize(t))
}

// tupleElem pushes the element `x.N` (or a record's `x.name`) of a tuple,
// where it fits a register.
func (g *gen) tupleElem(e *lang.FieldExpr) error {
	at, err := g.elemSlot(e)
	if err != nil {
		return err
	}
	g.emit(asm.LoadMem(asm.R0, asm.RFP, at, asm.DWord))
	return g.vs.push(asm.R0)
}

// elemSlot is the frame offset of a tuple's element e.
func (g *gen) elemSlot(e *lang.FieldExpr) (int16, error) {
	base, err := g.tupleAddr(e.X)
	if err != nil {
		return 0, err
	}
	return base + int16(TupleLayout(g.info.Types[e.X])[g.info.TupleElems[e]].Offset), nil
}

// elemInto writes a tuple's element that does not fit a register (a
// string, an address, a tuple) into the zeroed slot of size bytes at.
func (g *gen) elemInto(e *lang.FieldExpr, at int16, size int) error {
	from, err := g.elemSlot(e)
	if err != nil {
		return err
	}
	g.copyFrame(at, from, min(size, SlotSize(g.info.Types[e])))
	return nil
}

// compareTuples compiles == and != between two tuples of the same shape:
// both written in the layout that holds either (strings the longer of
// the two), zero-padded, and compared byte for byte.
func (g *gen) compareTuples(e *lang.BinaryExpr) error {
	w := commonTuple(g.info.Types[e.X], g.info.Types[e.Y])
	return g.compareWritten(SlotSize(w), e.Op, func(at int16) error { return g.intoType(e.X, at, w) }, func(at int16) error { return g.intoType(e.Y, at, w) })
}

// commonTuple is the type that holds values of a and b, tuples of one
// shape: each string element the longer of the two.
func commonTuple(a, b types.Type) types.Type {
	if a.Kind != types.Tuple || b.Kind != types.Tuple {
		if a.Kind == types.String && b.Size > a.Size {
			return b
		}
		return a
	}
	elems := make([]types.Type, len(a.Tuple.Elems))
	for i := range elems {
		elems[i] = commonTuple(a.Tuple.Elems[i], b.Tuple.Elems[i])
	}
	return types.NewTuple(elems, a.Tuple.Names)
}
