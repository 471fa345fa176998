package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/pcapfilter"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// loadArg loads argument i (from 0) of the traced function into dst. In a
// kprobe, the arguments past those in registers are on the stack, above
// the stack pointer at the function's entry (past the return address on
// x86-64).
func (g *gen) loadArg(dst asm.Register, i int) error {
	if g.ctx == ctxRegs {
		regs, err := g.maps.kprobeRegs()
		if err != nil {
			return err
		}
		if i < len(regs.args) {
			g.emit(asm.LoadMem(dst, asm.R9, regs.args[i], asm.DWord))
			return nil
		}
		slot, err := g.readScratch()
		if err != nil {
			return err
		}
		g.emit(asm.LoadMem(asm.R3, asm.R9, regs.sp, asm.DWord), asm.Add.Imm(asm.R3, regs.stackArg+int32(8*(i-len(regs.args)))))
		g.probeRead(slot, 8)
		g.emit(asm.LoadMem(dst, asm.RFP, slot, asm.DWord))
		return nil
	}
	g.emit(asm.LoadMem(dst, asm.R9, int16(8*i), asm.DWord))
	return nil
}

// loadRet loads a kprobe's return value (the register the architecture
// returns it in) into dst.
func (g *gen) loadRet(dst asm.Register) error {
	regs, err := g.maps.kprobeRegs()
	if err != nil {
		return err
	}
	g.emit(asm.LoadMem(dst, asm.R9, regs.ret, asm.DWord))
	return nil
}

// fit truncates or sign-extends a 64-bit register to an integer type.
func (g *gen) fit(r asm.Register, t types.Type) {
	if t.Kind != types.Int || t.Size >= 8 {
		return
	}
	if !t.Signed {
		n := len(g.insns)
		if n > 0 && loadsExactly(g.insns[n-1], r, t.Size) {
			// A load of the type's size has already zero-extended it.
			return
		}
		if n > 0 && g.ctx == ctxArgs && loadsExactly(g.insns[n-1], r, 8) && g.insns[n-1].Src == asm.R9 {
			// An argument of a BTF program: its low bytes (little-endian)
			// are the narrower value, which a load of that size reads
			// zero-extended.
			g.insns[n-1] = asm.LoadMem(r, asm.R9, g.insns[n-1].Offset, sizeOf(t.Size))
			return
		}
		switch t.Size {
		case 4:
			// A 32-bit move zero-extends.
			g.emit(asm.Mov.Reg32(r, r))
			return
		case 2:
			g.emit(asm.And.Imm(r, 0xffff))
			return
		case 1:
			g.emit(asm.And.Imm(r, 0xff))
			return
		}
	}
	shift := int32(64 - 8*t.Size)
	g.emit(asm.LSh.Imm(r, shift))
	if t.Signed {
		g.emit(asm.ArSh.Imm(r, shift))
	} else {
		g.emit(asm.RSh.Imm(r, shift))
	}
}

// constValue is the value a constant integer expression has in a register:
// fitted to its type, as fit would leave it.
func (g *gen) constValue(e lang.Expr) (int64, bool) {
	k, ok := g.info.Consts[e]
	if !ok || k.IsStr {
		return 0, false
	}
	v, t := int64(k.Int), g.info.Types[e]
	if t.Kind != types.Int || t.Size >= 8 {
		return v, true
	}
	shift := 64 - 8*t.Size
	if t.Signed {
		return v << shift >> shift, true
	}
	return int64(uint64(v) << shift >> shift), true
}

// loadConst puts v in r: a 32-bit immediate (sign-extended) where it fits,
// else a 64-bit one.
func loadConst(r asm.Register, v int64) asm.Instruction {
	if fitsImm(v) {
		return asm.Mov.Imm(r, int32(v))
	}
	return asm.LoadImm(r, v, asm.DWord)
}

// expr evaluates an integer or pointer expression onto the value stack.
func (g *gen) expr(e lang.Expr) error {
	t := g.info.Types[e]
	if v, ok := g.constValue(e); ok {
		g.emit(loadConst(asm.R0, v))
		return g.vs.push(asm.R0)
	}
	if i, ok := g.info.ArgRefs[e]; ok {
		idx := -1 - i // arg0..argN without a prototype
		if i >= 0 {
			// The probe's parameter: at the same place in every spec.
			idx = g.info.Probes[g.probe].Params[i].Index
		}
		if err := g.loadArg(asm.R0, idx); err != nil {
			return err
		}
		if t.Kind == types.Ptr && g.ctx == ctxArgs {
			// A typed pointer argument may be NULL, and the verifier allows
			// no arithmetic on it until it is checked: check it here, so
			// that it is a valid pointer or the number 0 from now on.
			ok := g.label("nonnull")
			g.emit(asm.JNE.Imm(asm.R0, 0, ok), asm.Mov.Imm(asm.R0, 0))
			g.mark(ok)
		}
		g.fit(asm.R0, t)
		return g.vs.push(asm.R0)
	}
	if !inReg(t) {
		return unsupported(e, "a "+t.String()+" value")
	}
	switch e := e.(type) {
	case *lang.ParenExpr:
		return g.expr(e.X)
	case *lang.CastExpr:
		if g.info.Types[e.X].Kind == types.Array {
			return g.arrayToInt(e)
		}
		if e.Type == "bool" && e.Ptr == 0 {
			return g.boolCast(e)
		}
		// A pointer cast changes only the type members resolve against.
		if err := g.expr(e.X); err != nil {
			return err
		}
		if t.Kind == types.Int {
			g.vs.pop(asm.R0)
			g.fit(asm.R0, t)
			return g.vs.push(asm.R0)
		}
		return nil
	case *lang.Ident:
		if f := g.info.Fields[e]; f != nil {
			return g.field(e, f)
		}
		if e.Name == "args" && g.ctx == ctxRecord {
			return g.vs.push(asm.R9)
		}
	case *lang.VarExpr:
		g.emit(asm.LoadMem(asm.R0, asm.RFP, g.vars[e.Name], asm.DWord))
		return g.vs.push(asm.R0)
	case *lang.FieldExpr:
		return g.member(e)
	case *lang.IndexExpr:
		if fe := g.info.TupleIdx[e]; fe != nil {
			return g.member(fe)
		}
		return g.index(e)
	case *lang.MapExpr:
		return g.mapRead(e)
	case *lang.UnaryExpr:
		return g.unary(e)
	case *lang.BinaryExpr:
		return g.binary(e)
	case *lang.CondExpr:
		return g.cond(e)
	case *lang.CallExpr:
		switch e.Name {
		case "strftime":
			// The format is in the type; the runtime prints the time.
			return g.expr(e.Args[1])
		case "kaddr":
			return g.kaddr(e)
		case "ksym", "hex", "tcp_state", "why":
			// Only the printing differs: the type says how.
			return g.expr(e.Args[0])
		case "pcap":
			return g.pcap(e)
		case stdlib.ScopeFunc:
			return g.inScope(e)
		case pcapfilter.LoadFunc:
			return g.pcapLoad(e)
		case pcapfilter.LenFunc:
			return g.pcapLen(e)
		case pcapfilter.DirFunc:
			return g.pcapOutbound(e)
		case pcapfilter.OffsetFunc:
			return g.pcapOffset(e)
		case pcapfilter.SetOffsetFunc:
			return g.pcapSetOffset(e)
		case "ntohs", "ntohl", "bswap":
			if err := g.expr(e.Args[0]); err != nil {
				return err
			}
			if t.Size == 1 {
				return nil
			}
			g.vs.pop(asm.R0)
			g.emit(asm.HostTo(asm.BE, asm.R0, sizeOf(t.Size)))
			return g.vs.push(asm.R0)
		case "kstack":
			return g.context(&lang.Ident{At: e.At, Name: "kstack"}, stdlib.LookupField("kstack"))
		case "macaddr":
			return g.macaddr(e)
		case "delete", "has_key":
			return g.elemCall(e)
		case "strcontains":
			return g.strcontains(e)
		case "globmatch":
			return g.globmatch(e)
		case "percpu_kaddr":
			return g.percpuKaddr(e)
		case "kptr", "uptr":
			return g.expr(e.Args[0])
		case "reg":
			return g.reg(e)
		case "strlen":
			return g.strlen(e)
		case "strstr":
			return g.strstr(e)
		case "memcmp":
			return g.memcmp(e)
		case "strncmp":
			return g.strncmp(e)
		}
		return unsupported(e, e.Name+"()")
	}
	return unsupported(e, "this expression")
}

// field reads a stdlib field or context value.
func (g *gen) field(e *lang.Ident, f *stdlib.Field) error {
	switch f.Src.Kind {
	case stdlib.SrcSkbPath:
		if err := g.basePtr(f.Src.Base); err != nil {
			return err
		}
		path := g.info.SkbPaths[f]
		if len(path) == 0 { // the skb pointer itself, or ct
			return nil
		}
		// tp_btf and fentry programs get the skb as a BTF pointer: its
		// members load directly, as the verifier checks against BTF.
		btfBase := g.ctx == ctxArgs && f.Src.Base == stdlib.BaseSkb
		if err := g.readPath(path, g.info.Types[e], f.Src.BigEndian, btfBase); err != nil {
			return err
		}
		if f.Src.Mask != 0 {
			g.vs.pop(asm.R0)
			g.emit(asm.And.Imm(asm.R0, int32(f.Src.Mask)))
			if err := g.vs.push(asm.R0); err != nil {
				return err
			}
		}
		if f.Name == "vlan" {
			return g.vlanPresent(btfBase)
		}
		return nil
	case stdlib.SrcContext:
		return g.context(e, f)
	case stdlib.SrcNetfilter:
		if f.Name == "hook" {
			return g.nfHook()
		}
	case stdlib.SrcHeader:
		if !g.info.Types[e].IsScalar() {
			return unsupported(e, f.Name)
		}
		return g.header(f)
	}
	return unsupported(e, f.Name)
}

// skbPtr pushes the skb pointer; a NULL skb ends the event.
func (g *gen) skbPtr() error { return g.skbPtrOr(exitLabel) }

// skbPtrOr pushes the skb pointer, jumping to label where it is NULL.
func (g *gen) skbPtrOr(label string) error {
	if g.entrySkb != 0 && g.ctx == ctxRegs {
		// A kretprobe: the skb its entry stashed.
		g.emit(asm.LoadMem(asm.R0, asm.RFP, g.entrySkb, asm.DWord), asm.JEq.Imm(asm.R0, 0, label))
		return g.vs.push(asm.R0)
	}
	if g.cookieSkb != 0 {
		// The skb the attach cookie placed (cookie.go).
		g.emit(asm.LoadMem(asm.R0, asm.RFP, g.cookieSkb, asm.DWord), asm.JEq.Imm(asm.R0, 0, label))
		return g.vs.push(asm.R0)
	}
	arg := g.skbArg
	if g.spec.SkbParam >= 0 {
		arg = g.spec.Params[g.spec.SkbParam].Index
	}
	if arg < 0 {
		return unsupported(g.probe, "an skb in this probe")
	}
	if err := g.loadArg(asm.R0, arg); err != nil {
		return err
	}
	// Some tracepoints may pass a NULL skb, and the verifier allows no
	// arithmetic on such a pointer before a check. No skb, nothing to trace.
	g.emit(asm.JEq.Imm(asm.R0, 0, label))
	return g.vs.push(asm.R0)
}

func (g *gen) context(e *lang.Ident, f *stdlib.Field) error {
	switch f.Name {
	case "uid", "gid":
		g.emit(asm.FnGetCurrentUidGid.Call())
		if f.Name == "gid" {
			g.emit(asm.RSh.Imm(asm.R0, 32))
		} else {
			g.fit(asm.R0, types.U32)
		}
	case "rand":
		g.emit(asm.FnGetPrandomU32.Call())
	case "cgroup":
		g.emit(asm.FnGetCurrentCgroupId.Call())
	case "cpid", "has_cpid":
		if err := g.cpid(f.Name == "has_cpid"); err != nil {
			return err
		}
	case "numaid":
		g.emit(asm.FnGetNumaNodeId.Call())
	case "jiffies":
		g.emit(asm.FnJiffies64.Call())
	case "ncpus":
		g.emit(asm.Mov.Imm(asm.R0, int32(g.maps.cpus)))
	case "usermode":
		return g.usermode()
	case stdlib.NsecsBoot:
		g.emit(asm.FnKtimeGetBootNs.Call())
	case stdlib.NsecsTAI:
		g.emit(asm.FnKtimeGetTaiNs.Call())
	case stdlib.KstackLen:
		return g.kstackLen()
	case "curtask":
		g.emit(asm.FnGetCurrentTask.Call())
	case "ctx":
		// R9 keeps the program's context (compile.go).
		g.emit(asm.Mov.Reg(asm.R0, asm.R9))
	case "cpu":
		g.emit(asm.FnGetSmpProcessorId.Call())
	case "pid", "tid":
		g.emit(asm.FnGetCurrentPidTgid.Call())
		if f.Name == "pid" {
			g.emit(asm.RSh.Imm(asm.R0, 32))
		} else {
			g.fit(asm.R0, types.U32)
		}
	case "nsecs", "time":
		g.emit(asm.FnKtimeGetNs.Call())
	case "elapsed":
		// Now less the start time, which the runtime stores before BEGIN.
		g.maps.startMap()
		// The scratch slot is the zero key, then the start time (0 if unset).
		key, err := g.readScratch()
		if err != nil {
			return err
		}
		g.emit(zero8(key)...)
		g.lookup(StartMap, key)
		absent := g.label("nostart")
		g.emit(
			asm.JEq.Imm(asm.R0, 0, absent),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.StoreMem(asm.RFP, key, asm.R1, asm.DWord),
		)
		g.emit(asm.FnKtimeGetNs.Call().WithSymbol(absent))
		g.emit(asm.LoadMem(asm.R1, asm.RFP, key, asm.DWord), asm.Sub.Reg(asm.R0, asm.R1))
	case "kstack":
		g.maps.stackMap()
		g.emit(
			asm.Mov.Reg(asm.R1, asm.R9),
			asm.LoadMapPtr(asm.R2, 0).WithReference(StackMap),
			asm.Mov.Imm(asm.R3, 0),
			asm.FnGetStackid.Call(),
		)
	case "retval":
		if g.target.Return {
			if err := g.skbRetval(); err != nil {
				return err
			}
			g.fit(asm.R0, g.info.Types[e])
			break
		}
		if g.ctx == ctxRegs {
			if err := g.loadRet(asm.R0); err != nil {
				return err
			}
		} else {
			// fexit: the return value follows the arguments.
			g.emit(asm.LoadMem(asm.R0, asm.R9, int16(8*len(g.spec.Params)), asm.DWord))
		}
		if g.spec.Func != "" {
			// A glob's function: its own return type, then the probe's.
			if g.spec.RetVoid {
				g.emit(asm.Mov.Imm(asm.R0, 0))
			} else {
				g.fit(asm.R0, g.spec.Ret)
			}
		}
		g.fit(asm.R0, g.info.Types[e])
	case "prog", "prog_id":
		return g.bpfProgValue(f.Name)
	case "len":
		// Only XDP's (stdlib.XdpFields) is a context value.
		return g.xdpLen()
	case "duration":
		// Now less the entry's time, which the prologue took.
		g.emit(asm.FnKtimeGetNs.Call(), asm.LoadMem(asm.R1, asm.RFP, g.entryTime, asm.DWord), asm.Sub.Reg(asm.R0, asm.R1))
	case "ct_state":
		return g.ctState()
	case "func":
		if g.userSpace() {
			return g.userFuncValue()
		}
		// The traced function's address; the runtime prints its symbol.
		if err := g.funcIP(); err != nil {
			return err
		}
	case "probe":
		return g.probeValue()
	case "packet", "pkt_edge", "pkt_index", "pkt_count", "pkt_parent":
		if err := g.packetField(f.Name); err != nil {
			return err
		}
	case "reason":
		// A probe's own reason parameter, or the reason argument of the
		// functions or tracepoint an skb: program is for; else none (0,
		// SKB_NOT_DROPPED_YET).
		arg := -1
		switch {
		case g.spec.ReasonParam >= 0:
			arg = g.spec.Params[g.spec.ReasonParam].Index
		case g.target.HasReason:
			arg = g.target.ReasonArg
		case g.cookie != 0:
			if err := g.cookieReason(); err != nil {
				return err
			}
			g.fit(asm.R0, g.info.Types[e])
			return g.vs.push(asm.R0)
		}
		if arg < 0 {
			g.emit(asm.Mov.Imm(asm.R0, 0))
			break
		}
		if err := g.loadArg(asm.R0, arg); err != nil {
			return err
		}
		g.fit(asm.R0, g.info.Types[e])
	default:
		return unsupported(e, f.Name)
	}
	return g.vs.push(asm.R0)
}

// readPath follows a member chain from the pointer on top of the stack and
// replaces it with the value read. With btfBase the pointer is one the
// verifier knows the BTF type of (the skb of a tp_btf or fentry program):
// a scalar member of it loads directly. Pointers read from it may be NULL,
// which the verifier wants checked before each use, so chains through
// them read with bpf_probe_read_kernel, as every read did before.
func (g *gen) readPath(path []check.Member, t types.Type, bigEndian, btfBase bool) error {
	if btfBase && len(path) > 0 && t.Kind != types.Ptr {
		direct := true
		for _, m := range path[:len(path)-1] {
			direct = direct && m.Type.Kind != types.Ptr
		}
		if direct {
			var off uint32
			for _, m := range path {
				off += m.Offset
			}
			return g.loadMember(off, path[len(path)-1], t, bigEndian)
		}
	}
	var off uint32 // bits from the current base pointer
	for i, m := range path {
		off += m.Offset
		last := i == len(path)-1
		if last {
			return g.readScalar(off, m, t, bigEndian)
		}
		if m.Type.Kind == types.Ptr {
			if err := g.readScalar(off, m, m.Type, false); err != nil {
				return err
			}
			off = 0
		}
	}
	return nil
}

// readScratch is the 8-byte slot that probe reads land in.
func (g *gen) readScratch() (int16, error) {
	if g.scratch == 0 {
		s, err := g.frame.keep(8)
		if err != nil {
			return 0, err
		}
		g.scratch = s
	}
	return g.scratch, nil
}

// readScalar pops a base pointer and pushes the integer or pointer at bit
// offset off from it, with bpf_probe_read_kernel (valid in every context).
func (g *gen) readScalar(off uint32, m check.Member, t types.Type, bigEndian bool) error {
	return g.readScalarFrom(false, off, m, t, bigEndian)
}

// readScalarFrom is readScalar from the traced process's memory where
// user is set (a pointer of types.Type.User), with bpf_probe_read_user.
func (g *gen) readScalarFrom(user bool, off uint32, m check.Member, t types.Type, bigEndian bool) error {
	slot, err := g.readScratch()
	if err != nil {
		return err
	}
	size := t.Size
	if t.Kind == types.Ptr {
		size = 8
	}
	shift := int32(0)
	if m.BitfieldSize > 0 {
		shift = int32(off % 8)
		size = int((uint32(shift) + m.BitfieldSize + 7) / 8)
		off -= uint32(shift)
	}
	// The read writes its size bytes (zeroes where it fails): a load of
	// that size takes them zero-extended; other sizes are read into a
	// zeroed slot and loaded whole.
	load := sizeOf(size)
	g.vs.pop(asm.R3)
	if load.Sizeof() != size {
		g.emit(zero8(slot)...)
		load = asm.DWord
	}
	g.emit(asm.Add.Imm(asm.R3, int32(off/8)))
	if user {
		g.readWith(asm.FnProbeReadUser, slot, size)
	} else {
		g.probeRead(slot, size)
	}
	g.emit(asm.LoadMem(asm.R0, asm.RFP, slot, load))
	if m.BitfieldSize > 0 {
		g.emit(asm.RSh.Imm(asm.R0, shift))
		g.emit(asm.LSh.Imm(asm.R0, int32(64-m.BitfieldSize)), asm.RSh.Imm(asm.R0, int32(64-m.BitfieldSize)))
	}
	if bigEndian && size > 1 {
		g.emit(asm.HostTo(asm.BE, asm.R0, sizeOf(size)))
	}
	g.fit(asm.R0, t)
	return g.vs.push(asm.R0)
}

// loadMember is readScalar from a BTF pointer: one load instruction, which
// the verifier checks against BTF and the kernel guards against faults,
// where readScalar calls bpf_probe_read_kernel through a stack slot.
// Bitfields and odd sizes still go through readScalar.
func (g *gen) loadMember(off uint32, m check.Member, t types.Type, bigEndian bool) error {
	size := t.Size
	if t.Kind == types.Ptr {
		size = 8
	}
	if m.BitfieldSize > 0 || off%8 != 0 || (size != 1 && size != 2 && size != 4 && size != 8) {
		return g.readScalar(off, m, t, bigEndian)
	}
	g.vs.pop(asm.R0)
	g.emit(asm.LoadMem(asm.R0, asm.R0, int16(off/8), sizeOf(size)))
	if bigEndian && size > 1 {
		g.emit(asm.HostTo(asm.BE, asm.R0, sizeOf(size)))
	}
	g.fit(asm.R0, t)
	return g.vs.push(asm.R0)
}

func sizeOf(n int) asm.Size {
	switch n {
	case 1:
		return asm.Byte
	case 2:
		return asm.Half
	case 4:
		return asm.Word
	}
	return asm.DWord
}

// member evaluates x->name or x.name.
func (g *gen) member(e *lang.FieldExpr) error {
	if _, ok := g.info.TupleElems[e]; ok {
		return g.tupleElem(e)
	}
	m, ok := g.memberOf(e)
	if !ok {
		return unsupported(e, "this member")
	}
	if err := g.baseOf(e); err != nil {
		return err
	}
	return g.readScalarFrom(g.info.Types[e.X].User, m.Offset, m, m.Type, false)
}

// memberOf is the member e resolves to in this program: where a probe
// list's classic tracepoints have args.NAME at different offsets, this
// spec's own (check.SpecInfo.RecordMembers).
func (g *gen) memberOf(e *lang.FieldExpr) (check.Member, bool) {
	if g.spec != nil {
		if m, ok := g.spec.RecordMembers[e]; ok {
			return m, true
		}
	}
	m, ok := g.info.Members[e]
	return m, ok
}

// dataLocOf is memberOf for a __data_loc string.
func (g *gen) dataLocOf(e *lang.FieldExpr) (check.DataLoc, bool) {
	if g.spec != nil {
		if loc, ok := g.spec.RecordDataLocs[e]; ok {
			return loc, true
		}
	}
	loc, ok := g.info.DataLocs[e]
	return loc, ok
}

// memberAddr puts the address of the member e names (x.arr, x->name) in
// dst, a scratch register; what says, in the error, what needed it.
func (g *gen) memberAddr(e lang.Expr, what string, dst asm.Register) error {
	if ie, ok := lang.Unparen(e).(*lang.IndexExpr); ok {
		return g.elemAddr(ie, what, dst)
	}
	if inFrame, err := g.frameStructAddr(e, dst); inFrame || err != nil {
		return err
	}
	fe, ok := lang.Unparen(e).(*lang.FieldExpr)
	m, known := g.memberOf(fe)
	if !ok || !known {
		return unsupported(e, what)
	}
	if err := g.baseOf(fe); err != nil {
		return err
	}
	g.vs.pop(dst)
	g.emit(asm.Add.Imm(dst, int32(m.Offset/8)))
	return nil
}

// elemAddr puts the address of a struct element of an array member,
// x.arr[i], in dst: ct->tuplehash[0].tuple.
func (g *gen) elemAddr(e *lang.IndexExpr, what string, dst asm.Register) error {
	t := g.info.Types[e]
	k, ok := g.info.ConstInt(e.Index)
	xt := g.info.Types[e.X]
	if !ok || t.BTF == nil || (xt.Kind != types.Array) {
		return unsupported(e, what)
	}
	size, err := btf.Sizeof(t.BTF)
	if err != nil {
		return unsupported(e, what)
	}
	if err := g.memberAddr(e.X, what, dst); err != nil {
		return err
	}
	g.emit(asm.Add.Imm(dst, int32(k)*int32(size)))
	return nil
}

// baseOf pushes the address that e's member offset is relative to: the
// pointer value for ->, or the address of the struct for `.`.
func (g *gen) baseOf(e *lang.FieldExpr) error {
	if g.info.Types[e.X].Kind == types.Ptr {
		return g.expr(e.X)
	}
	if err := g.memberAddr(e.X, "a member of this struct", asm.R0); err != nil {
		return err
	}
	return g.vs.push(asm.R0)
}

// index evaluates x[i]: an element of a BTF array member (x.arr[i]) or of
// the memory a pointer points to (p[i]), read with bpf_probe_read_kernel.
func (g *gen) index(e *lang.IndexExpr) error {
	t := g.info.Types[e]
	elem := t.Size
	if t.Kind == types.Ptr {
		elem = 8
	}
	switch g.info.Types[e.X].Kind {
	case types.Ptr:
		if err := g.expr(e.X); err != nil {
			return err
		}
	case types.Array, types.String:
		if err := g.arrayAddr(e.X, asm.R0); err != nil {
			return err
		}
		if err := g.vs.push(asm.R0); err != nil {
			return err
		}
	default:
		return unsupported(e, "indexing this value")
	}
	if k, ok := g.info.ConstInt(e.Index); ok {
		g.vs.pop(asm.R0)
		g.emit(asm.Add.Imm(asm.R0, int32(k)*int32(elem)))
	} else {
		if err := g.expr(e.Index); err != nil {
			return err
		}
		g.vs.pop(asm.R1)
		g.vs.pop(asm.R0)
		g.emit(asm.Mul.Imm(asm.R1, int32(elem)), asm.Add.Reg(asm.R0, asm.R1))
	}
	if err := g.vs.push(asm.R0); err != nil {
		return err
	}
	return g.readScalarFrom(g.info.Types[e.X].User, 0, check.Member{}, t, false)
}

// loadsExactly reports whether ins loads size bytes from memory into r,
// which leaves r zero-extended.
func loadsExactly(ins asm.Instruction, r asm.Register, size int) bool {
	if ins.OpCode.Class() != asm.LdXClass || ins.OpCode.Mode() != asm.MemMode || ins.Dst != r || ins.Symbol() != "" {
		return false
	}
	return ins.OpCode.Size().Sizeof() == size
}
