package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// The maps every script with output has.
const (
	EventsMap = "events" // the ring buffer of printf/print records
	LostMap   = "lost"   // the count of records the ring or perf buffer had no room for
)

// OneMap holds the u64 1, read-only to programs: the value count() and
// hist() create elements with.
const OneMap = "one"

// oneMap adds OneMap. Programs cannot write it (BPF_F_RDONLY_PROG), and
// helpers may read it as a map value; only the loader writes its 1.
func (ms *mapSet) oneMap() {
	if _, ok := ms.specs[OneMap]; ok {
		return
	}
	ms.specs[OneMap] = &ebpf.MapSpec{Name: OneMap, Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1,
		Flags: unix.BPF_F_RDONLY_PROG, Contents: []ebpf.MapKV{{Key: uint32(0), Value: uint64(1)}}}
}

// eventsBytes is the ring buffer's default size: 4 MiB; perfEventsBytes
// each CPU's perf buffer's.
const (
	eventsBytes     = 4 << 20
	perfEventsBytes = 256 << 10
)

func (ms *mapSet) perfBytes() int {
	if ms.eventsBytes > 0 {
		return ms.eventsBytes
	}
	return perfEventsBytes
}

// EventKind says which call a record comes from.
type EventKind uint8

// Event kinds.
const (
	EventPrintf EventKind = iota
	EventPrint
	EventExit     // exit(): end tracing
	EventPrintMap // print(@m)
	EventClearMap // clear(@m)
	EventZeroMap  // zero(@m)
	EventCapture  // capture(): a packet for the -w file
	EventJoin     // join(): strings the runtime joins and prints (join.go)
	EventCat      // cat(): a file the runtime prints, named as printf formats
	EventBlock    // a probe's printf records, sent together (printfblock.go)
)

// Event describes the records one printf or print call writes. A record is
// the call's id (8 bytes); for print, the time, CPU, skb address and
// function (8 bytes each); then each argument at Args[i].Offset.
type Event struct {
	ID   int
	Kind EventKind
	// Probe names where the record comes from when there is no function:
	// the tracepoint's name.
	Probe string
	Verbs []stdlib.Verb // printf's format
	Args  []EventArg
	Size  int
	// Map is the script map an EventPrintMap, EventClearMap or EventZeroMap
	// is about, without its @.
	Map string
	// End is set on an END probe's records: the only ones printed after
	// exit(), as bpftrace does.
	End bool
	// Return is set on the records of skbret: probes: a function's return;
	// and of bpfret: probes, a BPF program's.
	Return bool
	// Frame is set on the records of XDP programs' bpf: and bpfret:
	// probes: their skb field is the frame's struct xdp_buff.
	Frame bool
	// Top and Div are an EventPrintMap's print(@m, top, div): only the top
	// entries (0: all), each value divided by Div (0: as it is).
	Top, Div uint64
	// Sep is an EventJoin's separator.
	Sep string
	// MaxBytes is how much of an EventCat's file is printed at most
	// (config max_cat_bytes).
	MaxBytes int
	// Code is an EventExit's exit status: exit(code); CodeInRecord
	// where the code is known only when the probe runs, and the record
	// carries it (an s64 after the event's ID).
	Code         int
	CodeInRecord bool
	// Packet is set on a print record of a script that calls track(): its
	// head carries the skb's logical packet at PrintPacket, PrintParent
	// and PrintEdge (packet.go), and its arguments follow.
	Packet bool
}

// EventArg is one value in a record.
type EventArg struct {
	Name   string // the expression's text, for print
	Type   types.Type
	Offset int
	Size   int
}

// Offsets of print's fixed fields.
const (
	PrintTime = 8
	PrintCPU  = 16
	PrintSkb  = 24
	PrintFunc = 32
	printHead = 40
)

func (ms *mapSet) eventMaps() {
	if _, ok := ms.specs[EventsMap]; ok {
		return
	}
	if ms.perf {
		// One buffer per CPU; the runtime sizes them (perfBytes).
		ms.specs[EventsMap] = &ebpf.MapSpec{Name: EventsMap, Type: ebpf.PerfEventArray, KeySize: 4, ValueSize: 4}
	} else {
		size := eventsBytes
		if ms.eventsBytes > 0 {
			// A ring buffer is a power of two of pages.
			size = 4096
			for size < ms.eventsBytes {
				size *= 2
			}
		}
		ms.specs[EventsMap] = &ebpf.MapSpec{Name: EventsMap, Type: ebpf.RingBuf, MaxEntries: uint32(size)}
	}
	// One counter, added to atomically through its address (no lookup):
	// only a record that finds no room touches it.
	ms.specs[LostMap] = &ebpf.MapSpec{Name: LostMap, Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}
}

// output compiles printf(...) and print(a, b, ...) into a ring buffer record.
func (g *gen) output(s lang.Stmt, c *lang.CallExpr) error {
	ev := &Event{ID: len(g.out.Events), Kind: EventPrint, Size: printHead, Probe: g.spec.Spec.Name + g.target.Name,
		End: g.spec.Spec.Kind == lang.ProbeEnd, Return: g.target.Return}
	if g.target.bpf != nil {
		// A BPF program's hop is its name, known here (a program loaded
		// since kallsyms was read is not in it), and bpfret: its return.
		ev.Probe, ev.Return, ev.Frame = g.target.bpf.Name, g.spec.Spec.Kind == lang.ProbeBpfRet, g.xdpFrame()
	}
	args := c.Args
	if c.Name == "time" {
		// One verb, the strftime format, printed with the event's time.
		ev.Kind, ev.Size, ev.Verbs = EventPrintf, 16, g.info.Formats[c]
		ev.Args = []EventArg{{Name: "time", Type: types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtTime}, Offset: 8, Size: 8}}
		rec, err := g.frame.alloc(ev.Size)
		if err != nil {
			return err
		}
		g.maps.eventMaps()
		g.emit(storeImm64(rec, int32(ev.ID)))
		g.emit(asm.FnKtimeGetNs.Call(), asm.StoreMem(asm.RFP, rec+8, asm.R0, asm.DWord))
		g.submit(rec, ev.Size)
		g.out.Events = append(g.out.Events, ev)
		return nil
	}
	if c.Name == "printf" || c.Name == "cat" || c.Name == "errorf" || c.Name == "warnf" || c.Name == "debugf" {
		ev.Kind, ev.Size, ev.Verbs = EventPrintf, 8, g.info.Formats[c]
		if c.Name == "cat" {
			ev.Kind, ev.MaxBytes = EventCat, g.info.Config.MaxCatBytes
		}
		args = args[1:]
	} else if m, ok := args[0].(*lang.MapExpr); ok && len(m.Keys) == 0 && (len(args) == 1 || g.info.Types[m].Kind == types.MapRef) {
		// print(@m), print(@m, top), print(@m, top, div)
		ev := &Event{Kind: EventPrintMap, Map: m.Name}
		if len(args) > 1 {
			top, _ := g.info.ConstInt(args[1])
			ev.Top = uint64(top)
		}
		if len(args) > 2 {
			div, _ := g.info.ConstInt(args[2])
			ev.Div = uint64(div)
		}
		return g.control(ev)
	}
	if ev.Kind == EventPrint && g.maps.track {
		ev.Packet = true
		ev.Size += trackPacketSize
	}
	for _, a := range args {
		t := g.info.Types[a]
		if !inReg(t) && t.Kind != types.String && t.Kind != types.Addr && t.Kind != types.Endpoint && t.Kind != types.Packet && t.Kind != types.Tuple && t.Kind != types.Array && t.Kind != types.Struct {
			return unsupported(a, "printing a "+t.String())
		}
		size := SlotSize(t)
		ev.Args = append(ev.Args, EventArg{Name: g.info.Text(a), Type: t, Offset: ev.Size, Size: size})
		ev.Size += size
	}
	rec, err := g.frame.alloc(ev.Size)
	if err != nil {
		return err
	}
	g.maps.eventMaps()
	if ev.Kind == EventPrint {
		if err := g.printHead(ev, rec); err != nil {
			return err
		}
	} else {
		g.emit(storeImm64(rec, int32(ev.ID)))
	}
	// The event takes its id now: an argument may send records of its
	// own (a division's warning) while it is computed.
	g.out.Events = append(g.out.Events, ev)
	for i, a := range args {
		if err := g.into(a, rec+int16(ev.Args[i].Offset), ev.Args[i].Size); err != nil {
			return err
		}
	}
	if !g.putBlock(c, rec, ev.Size) {
		g.submit(rec, ev.Size)
	}
	return nil
}

// printHead writes the head of a print (or capture) record at rec: the
// event's id, the time, the CPU, the skb address and the function.
func (g *gen) printHead(ev *Event, rec int16) error {
	if ev.Packet {
		g.packetHead(rec)
	}
	g.emit(storeImm64(rec, int32(ev.ID)))
	g.emit(asm.FnKtimeGetNs.Call(), asm.StoreMem(asm.RFP, rec+PrintTime, asm.R0, asm.DWord))
	g.emit(asm.FnGetSmpProcessorId.Call(), asm.StoreMem(asm.RFP, rec+PrintCPU, asm.R0, asm.DWord))
	if g.head != nil {
		// A loop's body, called by the kernel: the probe's, copied in.
		g.emit(asm.LoadMem(asm.R0, asm.RFP, g.head.skb, asm.DWord), asm.StoreMem(asm.RFP, rec+PrintSkb, asm.R0, asm.DWord))
		g.emit(asm.LoadMem(asm.R0, asm.RFP, g.head.fn, asm.DWord), asm.StoreMem(asm.RFP, rec+PrintFunc, asm.R0, asm.DWord))
		return nil
	}
	if err := g.headSkb(); err != nil {
		return err
	}
	g.emit(asm.StoreMem(asm.RFP, rec+PrintSkb, asm.R0, asm.DWord))
	g.emit(asm.Mov.Imm(asm.R0, 0))
	if g.info.Probes[g.probe].Func {
		if err := g.funcIP(); err != nil {
			return err
		}
	}
	g.emit(asm.StoreMem(asm.RFP, rec+PrintFunc, asm.R0, asm.DWord))
	return nil
}

// submit writes size bytes at rec to the ring buffer, counting a failure in
// the lost map.
func (g *gen) submit(rec int16, size int) {
	g.submitWith(func(data, n asm.Register) {
		g.emit(asm.Mov.Reg(data, asm.RFP), asm.Add.Imm(data, int32(rec)), asm.Mov.Imm(n, int32(size)))
	})
}

// submitWith writes a record to the ring buffer (or perf buffer): load
// puts its address and size in the two registers it is given. A failure is
// counted in the lost map.
func (g *gen) submitWith(load func(data, size asm.Register)) {
	sent := g.label("sent")
	if g.maps.perf {
		// bpf_perf_event_output(ctx, map, BPF_F_CURRENT_CPU, data, size)
		load(asm.R4, asm.R5)
		g.emit(
			asm.Mov.Reg(asm.R1, asm.R9),
			asm.LoadMapPtr(asm.R2, 0).WithReference(EventsMap),
			asm.LoadImm(asm.R3, 0xffffffff, asm.DWord),
			asm.FnPerfEventOutput.Call(),
			asm.JEq.Imm(asm.R0, 0, sent),
		)
	} else {
		load(asm.R2, asm.R3)
		g.emit(
			asm.LoadMapPtr(asm.R1, 0).WithReference(EventsMap),
			asm.Mov.Imm(asm.R4, 0),
			asm.FnRingbufOutput.Call(),
			asm.JEq.Imm(asm.R0, 0, sent),
		)
	}
	// No room: count the loss, so that it is reported, never silent.
	g.emit(
		asm.LoadMapValue(asm.R1, 0, 0).WithReference(LostMap),
		asm.Mov.Imm(asm.R2, 1),
		asm.AddAtomic.Mem(asm.R1, asm.R2, asm.DWord, 0),
	)
	g.mark(sent)
}

// control writes a record that asks the runtime to act: exit, or print,
// clear or zero a whole map. It has just the event's id.
func (g *gen) control(ev *Event) error {
	ev.ID, ev.Size, ev.Probe, ev.End = len(g.out.Events), 8, g.spec.Spec.Name, g.spec.Spec.Kind == lang.ProbeEnd
	rec, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	g.maps.eventMaps()
	g.emit(storeImm64(rec, int32(ev.ID)))
	g.submit(rec, 8)
	g.out.Events = append(g.out.Events, ev)
	return nil
}

// stringInto writes a string value into the zeroed `size` bytes at the
// frame offset at.
func (g *gen) stringInto(e lang.Expr, at int16, size int) error {
	// A read never goes past the source's own size, nor fills the last byte.
	n := min(size, g.info.Types[e].Size)
	if k, ok := g.info.Consts[e]; ok && k.IsStr {
		g.storeString(at, size, k.Str)
		return nil
	}
	switch e := lang.Unparen(e).(type) {
	case *lang.Ident:
		f := g.info.Fields[e]
		switch {
		case f != nil && f.Src.Kind == stdlib.SrcNetfilter:
			return g.nfName(f.Name, at, n)
		case f != nil && f.Name == "comm":
			g.emit(
				asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, int32(at)),
				asm.Mov.Imm(asm.R2, int32(min(size, 16))),
				asm.FnGetCurrentComm.Call(),
			)
			return nil
		case f != nil && f.Src.Kind == stdlib.SrcSkbPath && len(f.Src.Path) > 0:
			if err := g.basePtr(f.Src.Base); err != nil {
				return err
			}
			return g.pathString(g.info.SkbPaths[f], at, n)
		}
	case *lang.FieldExpr:
		if loc, ok := g.dataLocOf(e); ok {
			// A __data_loc string: the low 16 bits of the u32 in the
			// record are where the string is, from the record's start.
			g.emit(
				asm.LoadMem(asm.R3, asm.R9, int16(loc.Offset), asm.Word),
				asm.And.Imm(asm.R3, 0xffff),
				asm.Add.Reg(asm.R3, asm.R9),
			)
			g.readString(at, n)
			return nil
		}
		if err := g.memberAddr(e, "this string", asm.R3); err != nil {
			return err
		}
		if g.info.Types[e].User {
			// A char array in the traced process's memory.
			g.readWith(asm.FnProbeReadUserStr, at, n)
			return nil
		}
		g.readString(at, n)
		return nil
	case *lang.CallExpr:
		if e.Name == "buf" {
			return g.bufInto(e, at)
		}
		if e.Name == "usym" {
			return g.usymInto(e, at, size)
		}
		if e.Name == "comm" && len(e.Args) == 1 {
			return g.commPidInto(e, at, size)
		}
		if e.Name != "str" {
			break
		}
		if t := g.info.Types[e.Args[0]]; t.Kind == types.String {
			return g.stringInto(e.Args[0], at, n)
		}
		if err := g.expr(e.Args[0]); err != nil {
			return err
		}
		g.vs.pop(asm.R3)
		if g.userPointer(e.Args[0]) {
			g.readWith(asm.FnProbeReadUserStr, at, n)
			return nil
		}
		g.readString(at, n)
		return nil
	}
	return unsupported(e, "this string")
}

// pathString follows a member chain from the pointer on the value stack to a
// char array and reads it as a string.
func (g *gen) pathString(path []check.Member, at int16, size int) error {
	var off uint32
	for i, m := range path {
		off += m.Offset
		if i == len(path)-1 {
			g.vs.pop(asm.R3)
			g.emit(asm.Add.Imm(asm.R3, int32(off/8)))
			g.readString(at, size)
			return nil
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

// readString reads a NUL-terminated string from the address in R3 (in the
// traced process's memory in a uprobe).
func (g *gen) readString(at int16, size int) {
	g.readWith(g.readHelper(asm.FnProbeReadKernelStr), at, size)
}

// The maps some scripts need besides their own.
const (
	// StackMap holds the kernel stacks kstack values are ids into.
	StackMap = "stacks"
	// StartMap holds, at key 0, the monotonic time tracing started, for
	// elapsed; the runtime writes it before BEGIN runs.
	StartMap = "start"
	// TrackedMap holds the skbs track() follows, by address.
	TrackedMap = "tracked"
)

// StackDepth is how many frames a kstack keeps (the kernel's default
// perf_event_max_stack).
const StackDepth = 127

func (ms *mapSet) stackMap() {
	if _, ok := ms.specs[StackMap]; !ok {
		ms.specs[StackMap] = &ebpf.MapSpec{Name: StackMap, Type: ebpf.StackTrace, KeySize: 4, ValueSize: 8 * StackDepth, MaxEntries: 4096}
	}
}

func (ms *mapSet) startMap() {
	if _, ok := ms.specs[StartMap]; !ok {
		ms.specs[StartMap] = &ebpf.MapSpec{Name: StartMap, Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}
	}
}

// userPointer reports whether e is a pointer into user memory: a pointer
// field of a syscall tracepoint's record (args.filename of
// sys_enter_openat), which str() reads with bpf_probe_read_user_str, or a
// pointer read through one (types.Type.User).
func (g *gen) userPointer(e lang.Expr) bool {
	if g.info.Types[e].User {
		return true
	}
	fe, ok := lang.Unparen(e).(*lang.FieldExpr)
	if !ok || g.spec == nil || g.spec.Record == nil || g.spec.Category != "syscalls" {
		return false
	}
	id, ok := fe.X.(*lang.Ident)
	return ok && id.Name == "args"
}
