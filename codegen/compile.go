package codegen

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// ctxKind says how a program reads its arguments.
type ctxKind uint8

const (
	// ctxArgs: R1 points to an array of u64 arguments (tp_btf, fentry, fexit).
	ctxArgs ctxKind = iota
	// ctxRegs: R1 points to struct pt_regs (kprobe, kretprobe).
	ctxRegs
	// ctxRecord: R1 points to a tracepoint's record (a classic
	// tracepoint program); args is that pointer.
	ctxRecord
)

// Program is one eBPF program: the code of a probe for one of its specs.
type Program struct {
	Probe *lang.Probe
	Spec  *check.SpecInfo
	Name  string
	Prog  *ebpf.ProgramSpec
	// Attach is where the program attaches: what the runtime reads.
	Attach Attach
	// SkbArg is, for skb: probes, the argument position of the skb this
	// program reads; the runtime attaches it to the functions whose skb is
	// there. -1 for other probes.
	SkbArg int
	// HasReason says the drop reason is argument ReasonArg of the functions
	// (or tracepoint) this skb: program attaches to.
	HasReason bool
	ReasonArg int
	// Cookie says the program reads the skb's and the reason's positions
	// from its attach cookie (SkbTarget's Cookie): the runtime attaches
	// it to every function of its glob, each with its AttachCookie.
	Cookie bool
	// Tracepoint is set when an skb: probe falls back to this tracepoint.
	Tracepoint string
	// Function is set when an skb: probe traces this function with fentry.
	Function string
	// Helper is set on the programs track() adds (HelperUntrack,
	// HelperFollow) and skbret: probes' entry programs (HelperEntry);
	// Probe and Spec are nil on those.
	Helper string
	// Return is set on skbret: programs; Ret is the return class of the
	// functions a kprobe-form one attaches to.
	Return bool
	Ret    RetClass
	// Functions are, for a kprobe or kretprobe glob (kprobe:tcp_*), the
	// functions this program attaches to: those whose arguments it reads
	// are where it reads them. The runtime attaches it with kprobe-multi
	// or a kprobe each. (An fentry or fexit glob compiles to a program
	// per function, with Function set.)
	Functions []string
	// Merged are, on a program that runs several probes on one attach
	// point (merge.go), those probes' programs in script order: it runs
	// each one's code in turn. Their Prog is nil; Unmerge rebuilds them,
	// which the runtime loads where the kernel refuses the merged
	// program. nil on one probe's program.
	Merged []*Program
	// BPF is, on a bpf: or bpfret: program, the loaded program it traces
	// (fentry or fexit on its function, AttachTo): the runtime opens it
	// by its id as the AttachTarget.
	BPF *check.BPFProg
	// frame is the stack the program's own frame uses, callee what the
	// functions it calls need (loop callbacks: stackDepth).
	frame, callee int
	// span is, on a probe's program in Merged, where its code lies in the
	// merged program (its own Prog is nil: Unmerge rebuilds it).
	span mergedSpan
}

// KprobeForm reports whether p is an skb: program in the kprobe form: one
// program for an skb position, which the runtime attaches to many functions.
func (p *Program) KprobeForm() bool {
	return (p.SkbArg >= 0 || p.Return || p.Cookie) && p.Tracepoint == "" && p.Function == ""
}

// SkbTarget is one thing an skb: probe compiles a program for: a
// tracepoint it falls back to where no function backend can attach, a
// function for the fentry backend, or (no Name) the kprobe form: one
// program for an skb position and a reason position, which the runtime
// attaches to every function whose arguments are there.
type SkbTarget struct {
	Name string
	// Fentry makes the target a function, traced with fentry.
	Fentry bool
	SkbArg int
	// HasReason says argument ReasonArg is the drop reason (enum
	// skb_drop_reason), which `reason` reads.
	HasReason bool
	ReasonArg int
	// Cookie makes the target the kprobe form for every place at once
	// (kprobe-multi, or kprobes from Linux 5.15): the program reads where
	// the skb and the reason are from its attach cookie (cookie.go);
	// SkbArg is then -1.
	Cookie bool
	// FuncAddr is what `func` reads on a tracepoint: the address of the
	// kernel's __traceiter_NAME.
	FuncAddr uint64
	// Category is the tracepoint's tracefs category where tracefs lists
	// it: probe prints tracepoint:CATEGORY:NAME, else rawtracepoint:NAME.
	Category string
	// Return makes the target the return side (skbret:): an fexit program
	// on function Name (Fentry), or the kprobe form for the functions that
	// return class Ret. NArgs is the function's number of parameters, which
	// the return value follows in an fexit program's context.
	Return bool
	NArgs  int
	Ret    RetClass
	// fn is the one function a kprobe or kretprobe glob's program is for,
	// where the glob compiles to a program per function; shared says the
	// program is for many (compileGlob).
	fn     string
	shared bool
	// bpf is the loaded program a bpf: or bpfret: spec's program traces.
	bpf *check.BPFProg
}

// Options configure code generation.
type Options struct {
	// SkbTargets, keyed by an skb: spec's glob, makes that spec compile to
	// one program per target (tp_btf, fentry, or a kprobe-form shape).
	// Without it, a spec compiles to kprobe-form programs for the skb
	// positions 0 to SkbArgs-1, without a reason.
	SkbTargets map[string][]SkbTarget
	// RetTargets is SkbTargets for skbret: specs (Return targets), and
	// EntryTargets the entry programs that stash each call's skb and time
	// for them (SkbArg, or Fentry and Name). Without RetTargets, an
	// skbret: spec compiles to one kprobe-form program, with entry
	// programs for the skb positions 0 to SkbArgs-1.
	RetTargets   map[string][]SkbTarget
	EntryTargets []SkbTarget
	// CPUs bounds the loops that read per-CPU maps in a program; 0 means
	// this machine's possible CPUs.
	CPUs int
	// PerfEvents writes records to a perf event array instead of a ring
	// buffer, for kernels before 5.8.
	PerfEvents bool
	// Ksym returns a kernel symbol's address, 0 if unknown: table and chain
	// recognise nftables' and iptables' hook functions by it.
	Ksym func(name string) uint64
	// EventsBytes is the ring buffer's size, or each CPU's perf buffer's;
	// 0 means 4 MiB (ring buffer) or 256 KiB (perf, per CPU).
	EventsBytes int
	// Snaplen is how many bytes of a packet capture() records: 0 means
	// DefaultSnaplen; larger than MaxSnaplen, MaxSnaplen.
	Snaplen int
	// RuleFlows keeps rule()'s addresses and ports, which only the
	// nftables trace (--nftrace) matches a drop by; without it they are
	// zero, so that a map keyed by rule() keeps an element for each rule,
	// not for each flow it dropped.
	RuleFlows bool
	// PageMul and PageOff turn a struct page pointer into the address of
	// the page's bytes, page*PageMul + PageOff (runtime/kernel's PageVirt), for
	// capture() to read a non-linear skb's paged fragments; with PageMul
	// 0 it captures the linear part only.
	PageMul, PageOff uint64
	// Arch is the GOARCH of the kernel the programs are for: kprobes read
	// its struct pt_regs. "" is this binary's.
	Arch string
	// HaveFuncIP reports whether the kernel has bpf_get_func_ip (Linux
	// 5.15 and later); nil says it has. It is asked only where a program
	// would call it: a program for one function loads that function's
	// address from Ksym anyway. Where the kernel lacks it, kprobe
	// programs shared by many functions read the instruction pointer, and
	// their return programs the address their entry kept.
	HaveFuncIP func() bool
	// Backend is how skb: and skbret: probes' programs in the kprobe form
	// attach to functions, and GlobBackend how kprobe: and kretprobe:
	// globs' do: with BackendKprobeMulti they are kprobe-multi programs
	// (Attach.Multi); otherwise, or "", kprobes.
	Backend, GlobBackend Backend
	// HaveHelper reports whether the kernel has a helper that every
	// program type may call; nil says it has. A loop over a map needs
	// bpf_for_each_map_elem (Linux 5.13), one over a range that is not
	// constant bpf_loop (5.17): where the kernel lacks it, the loop is a
	// positioned error.
	HaveHelper func(asm.BuiltinFunc) bool
	// Sample, from 1, puts --sample's gate in every program on events
	// with an skb: one skb in Sample is kept, all its hops (sample.go);
	// the runtime may raise it through SampleRateMap. MaxRate, from 1,
	// lets that many events a second through on each CPU (ratecap.go).
	// 0: no gate, and the programs are as without the flags.
	Sample, MaxRate uint32
}

// SkbArgs are the argument positions skb: programs are generated for when
// the runtime does not say which (a dump with -d): the skb is among the
// first five arguments of nearly every function taking one.
const SkbArgs = 5

// Output is a compiled script: its programs, the maps they share, and the
// layout of the records its printf and print calls write.
type Output struct {
	Programs []*Program
	Maps     map[string]*ebpf.MapSpec
	Events   []*Event
	// MapLayouts are the script's maps, in the order they first appear:
	// how each is keyed, what it holds and where it lies (Layout finds
	// one by name).
	MapLayouts []*MapLayout
	// PerfBytes is each CPU's perf buffer size when records go to a perf
	// event array (Options.PerfEvents); 0 with a ring buffer.
	PerfBytes int
	// ProbeNames are the names probe's values index, from 1 (probename.go).
	ProbeNames []string
	// MaxRate is --max-rate's cap where a program has its gate, else 0.
	MaxRate uint32

	// layouts indexes MapLayouts by name.
	layouts map[string]*MapLayout
	// late compiles bpf: probes for programs loaded while tracing
	// (CompileLate); nil where no spec waits for them. lenientBPF: a
	// bpf: program the kernel will not let trace its target is skipped,
	// not an error (missing_probes = warn or ignore).
	late       *lateBPF
	lenientBPF bool
}

// Compile generates the programs of a checked script, as check.Prune
// returns it: has() and missing_probes are decided before, not compiled.
func Compile(s *lang.Script, info *check.Info, opts Options) (*Output, error) {
	if len(info.Has) > 0 || len(info.Missing) > 0 {
		return nil, errors.New("codegen: the script has has() conditions or specs missing_probes drops: compile the script check.Prune returns")
	}
	out := &Output{Maps: map[string]*ebpf.MapSpec{}, MapLayouts: mapLayouts(info), layouts: map[string]*MapLayout{}}
	for _, l := range out.MapLayouts {
		out.layouts[l.Name] = l
	}
	ms := &mapSet{layouts: out.layouts, specs: out.Maps, cpus: opts.CPUs, perf: opts.PerfEvents, eventsBytes: opts.EventsBytes, track: usesTrack(info),
		snaplen: min(cmp.Or(opts.Snaplen, DefaultSnaplen), MaxSnaplen), pageMul: opts.PageMul, pageOff: opts.PageOff,
		arch: opts.Arch, haveFuncIP: opts.HaveFuncIP, haveHelper: opts.HaveHelper, ruleFlows: opts.RuleFlows,
		sample: opts.Sample, maxRate: min(opts.MaxRate, MaxRateLimit)}
	if ms.perf {
		// A perf record's size is 16 bits.
		ms.snaplen = min(ms.snaplen, maxPerfSnaplen)
	}
	if ms.cpus == 0 {
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return nil, fmt.Errorf("count CPUs: %w", err)
		}
		ms.cpus = n
	}
	for pi, p := range s.Probes {
		for si, spec := range info.Probes[p].Specs {
			name := fmt.Sprintf("p%d_%d", pi, si)
			if len(spec.Progs) > 0 || spec.LateType != "" {
				progs, err := compileBPFProgs(s, info, ms, out, p, spec, name, opts.Ksym)
				if err != nil {
					return nil, err
				}
				out.Programs = append(out.Programs, progs...)
				continue
			}
			if len(spec.Funcs) > 0 {
				progs, err := compileGlob(s, info, ms, out, p, spec, name, opts.Ksym)
				if err != nil {
					return nil, err
				}
				out.Programs = append(out.Programs, progs...)
				continue
			}
			var targets []SkbTarget
			switch tps, ok := opts.SkbTargets[spec.Spec.Target]; {
			case spec.Spec.Kind == lang.ProbeSkbRet:
				targets = defaultRetTargets
				if opts.RetTargets != nil {
					targets = opts.RetTargets[spec.Spec.Target]
				}
			case spec.Spec.Kind != lang.ProbeSkb:
				targets = []SkbTarget{{SkbArg: -1}}
			case ok:
				targets = tps
			default:
				for a := 0; a < SkbArgs; a++ {
					targets = append(targets, SkbTarget{SkbArg: a})
				}
			}
			for i, tg := range targets {
				n := name
				switch {
				case tg.Return && tg.Fentry:
					n = fmt.Sprintf("%s_fx%d", name, i)
				case tg.Return:
					n = fmt.Sprintf("%s_ret_%s", name, tg.Ret)
				case tg.Fentry:
					n = fmt.Sprintf("%s_fn%d", name, i)
				case tg.Name != "":
					n = fmt.Sprintf("%s_tp%d", name, i)
				case tg.Cookie:
					n = name + "_skbs"
				case tg.HasReason:
					n = fmt.Sprintf("%s_skb%d_r%d", name, tg.SkbArg, tg.ReasonArg)
				case tg.SkbArg >= 0:
					n = fmt.Sprintf("%s_skb%d", name, tg.SkbArg)
				}
				prog, err := compileProbe(info, ms, out, p, spec, n, tg, opts.Ksym)
				if err != nil {
					return nil, positioned(s, spec, err)
				}
				out.Programs = append(out.Programs, prog)
			}
		}
	}
	out.Programs = mergeSameAttach(out.Programs)
	if err := entryPrograms(s, ms, out, opts); err != nil {
		return nil, fmt.Errorf("skbret: %w", err)
	}
	if ms.track {
		if err := trackHelpers(out, info.SkbType); err != nil {
			return nil, fmt.Errorf("track(): %w", err)
		}
		if opts.Backend == "" || opts.Backend == BackendTracepoint {
			p, err := slabFreeHelper(info.SkbType)
			if err != nil {
				return nil, fmt.Errorf("track(): %w", err)
			}
			out.Programs = append(out.Programs, p)
		}
	}
	if ms.sampled {
		unsampleHelpers(out)
	}
	applyBackend(out.Programs, opts)
	if opts.PerfEvents {
		out.PerfBytes = ms.perfBytes()
	}
	out.late = newLateBPF(s, info, ms, out, opts.Ksym)
	out.lenientBPF = info.Config.MissingProbes != check.MissingError
	return out, nil
}

// positioned points a generation error at the script, as the checker does.
func positioned(s *lang.Script, spec *check.SpecInfo, err error) error {
	d := &lang.Diagnostics{Src: s.Src}
	var ue *unsupportedError
	var big errTooLarge
	var se *spanError
	switch {
	case errors.As(err, &ue):
		d.Add(ue.span, "", "%s is not compiled yet", ue.what)
	case errors.As(err, &se):
		d.Add(se.span, se.hint, "%s", se.msg)
	case errors.As(err, &big):
		d.Add(spec.Spec.At, "split the probe into several, each with a part of the conditions; or count by key in a map instead of testing each value", "%v", err)
	default:
		d.Add(spec.Spec.At, "", "%v", err)
	}
	return d
}

// gen generates one program.
type gen struct {
	// noOne keeps count() and hist() off the one map: the program would
	// otherwise use one map more than the kernel allows.
	noOne  bool
	info   *check.Info
	maps   *mapSet
	out    *Output
	probe  *lang.Probe
	spec   *check.SpecInfo
	ctx    ctxKind
	insns  asm.Instructions
	frame  frame
	vs     vstack
	vars   map[string]int16
	labels int
	// scratch is the slot probe reads land in (0 until allocated).
	scratch int16
	// pb is the probe's printf block, if it has one (printfblock.go).
	pb *printfBlock
	// skbArg is the skb's argument position in skb: programs, else -1.
	skbArg int
	// cookie and cookieSkb are the slots of the attach cookie and the skb
	// it places, in a Cookie target's program (cookie.go); 0 elsewhere.
	cookie, cookieSkb int16
	// target is the tracepoint an skb: probe falls back to, if any.
	target SkbTarget
	// ip and addrSlot are the scratch slots of header and address reads.
	ip       *ipSlots
	addrSlot int16
	// pkt holds the packet a pcap filter reads; pcapShort is the label a
	// load past its end jumps to, while a filter is being generated.
	pkt       *pktSlots
	pcapShort string
	// nf holds what nfScan found; usesTables says whether it looks for
	// the table too (table or chain are read); ksym resolves the hook
	// functions' addresses.
	nf         *nfSlots
	usesTables bool
	// nfAt is the body's statement the netfilter scan goes before.
	nfAt lang.Stmt
	ksym func(string) uint64
	// mapOf names the map an aggregation call is assigned to.
	mapOf map[*lang.CallExpr]string
	// entrySkb and entryTime are the slots of the skb and the time an
	// skbret: program took from its function's entry (0 elsewhere);
	// entryFunc that of the function's address, where the entry kept it
	// (stashFunc).
	entrySkb, entryTime, entryFunc int16
	// funcAddr is the address of the one function the program traces, 0
	// where it traces many or the address is unknown.
	funcAddr uint64
	// funcs are the functions loop bodies compile to (loop.go), placed
	// after the program's exit; a program and its callbacks share them.
	// calleeDepth is the stack those this function calls need; loop is
	// the innermost loop, where break and continue go; loopVars the types
	// of the loops' variables in scope; head, in a callback, where the
	// skb and function of print()'s head are; varsAt where variables'
	// zeroing goes (after a callback's entry).
	funcs       *[]asm.Instructions
	calleeDepth int
	loop        *loopLabels
	loopVars    map[string]types.Type
	head        *headSlots
	varsAt      int
	// trk is where a tracking script's gate keeps the skb's logical
	// packet (packet.go), 0 before the gate or without one.
	trk int16
	// retLabel is, in a callback whose body returns, where return goes.
	retLabel string
}

// hasSkb reports whether the program knows an skb: an skb: or skbret:
// program, or a probe with an skb argument.
func (g *gen) hasSkb() bool {
	return g.skbArg >= 0 || g.entrySkb != 0 || g.target.Cookie || (g.spec != nil && g.spec.SkbParam >= 0)
}

func (g *gen) emit(ins ...asm.Instruction) { g.insns = append(g.insns, ins...) }

// label returns a fresh label name.
func (g *gen) label(what string) string {
	g.labels++
	return fmt.Sprintf("%s_%d", what, g.labels)
}

// mark puts a label on the next instruction, with a no-op jump target.
func (g *gen) mark(label string) {
	g.emit(asm.Mov.Reg(asm.R0, asm.R0).WithSymbol(label))
}

const exitLabel = "exit"

func compileProbe(info *check.Info, ms *mapSet, out *Output, p *lang.Probe, spec *check.SpecInfo, name string, tg SkbTarget, ksym func(string) uint64) (*Program, error) {
	events := len(out.Events)
	// The stack alone, unless the script sets on_stack_limit; where the
	// slots do not fit, again with the large ones in the scratch area
	// (scratch.go).
	onStack := info.Config.OnStackLimit
	prog, err := compileProbeGiving(onStack, info, ms, out, p, spec, name, tg, ksym)
	if onStack == 0 && errors.Is(err, errStackFull) {
		out.Events = out.Events[:events]
		prog, err = compileProbeGiving(defaultOnStack, info, ms, out, p, spec, name, tg, ksym)
	}
	return prog, err
}

// compileProbeGiving compiles a probe's program with the slots above
// onStack bytes in the scratch area (0: none).
func compileProbeGiving(onStack int, info *check.Info, ms *mapSet, out *Output, p *lang.Probe, spec *check.SpecInfo, name string, tg SkbTarget, ksym func(string) uint64) (*Program, error) {
	events := len(out.Events)
	prog, err := compileProbeWith(0, onStack, info, ms, out, p, spec, name, tg, ksym)
	// At the kernel's limit of maps, the stop gate gives way, then the one
	// map: again, from the same events.
	for give := 1; give <= 2; give++ {
		tm := (*tooManyMapsError)(nil)
		if !errors.As(err, &tm) || (!tm.stop && !tm.one) {
			break
		}
		out.Events = out.Events[:events]
		prog, err = compileProbeWith(give, onStack, info, ms, out, p, spec, name, tg, ksym)
	}
	return prog, err
}

// tooManyMapsError is a program that uses more maps than the kernel lets it;
// one and stop say the one map and the stop gate's are among them.
type tooManyMapsError struct {
	n         int
	one, stop bool
}

func (e *tooManyMapsError) Error() string {
	return fmt.Sprintf("the probe uses %d maps, and the kernel lets one program use at most %d; split it into smaller probes", e.n, maxProgMaps)
}

// compileProbeWith compiles a probe's program, giving way at the map limit
// as give says: 0 nothing, 1 the stop gate, 2 the stop gate and the one map.
func compileProbeWith(give, onStack int, info *check.Info, ms *mapSet, out *Output, p *lang.Probe, spec *check.SpecInfo, name string, tg SkbTarget, ksym func(string) uint64) (*Program, error) {
	g := &gen{noOne: give >= 2, info: info, maps: ms, out: out, probe: p, spec: spec, vars: map[string]int16{}, skbArg: tg.SkbArg, target: tg, mapOf: map[*lang.CallExpr]string{}, ksym: ksym,
		funcs: &[]asm.Instructions{}, loopVars: map[string]types.Type{}}
	g.vs.g = g
	if onStack > 0 {
		g.frame.onStack, g.vs.regs = onStack, scratchVregs
	}
	g.funcAddr = oneFuncAddr(spec.Spec.Kind, spec, tg, ksym)
	ps := &ebpf.ProgramSpec{Name: name, License: "GPL"}
	switch spec.Spec.Kind {
	case lang.ProbeTracepoint:
		if spec.Record != nil {
			g.ctx = ctxRecord
			ps.Type, ps.AttachTo = ebpf.TracePoint, spec.Category+"/"+spec.Spec.Name
			break
		}
		g.ctx = ctxArgs
		ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, ebpf.AttachTraceRawTp, spec.Spec.Name
	case lang.ProbeFentry:
		g.ctx = ctxArgs
		ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, ebpf.AttachTraceFEntry, spec.Function()
	case lang.ProbeFexit:
		g.ctx = ctxArgs
		ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, ebpf.AttachTraceFExit, spec.Function()
	case lang.ProbeBpf, lang.ProbeBpfRet:
		g.ctx = ctxArgs
		ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, bpfAttachType(spec.Spec.Kind), spec.Function()
	case lang.ProbeKprobe, lang.ProbeKretprobe:
		g.ctx = ctxRegs
		ps.Type, ps.AttachTo = ebpf.Kprobe, spec.Function()
	case lang.ProbeUprobe, lang.ProbeUretprobe:
		// The runtime attaches it at spec.Binary's spec.FileOffset.
		g.ctx = ctxRegs
		ps.Type = ebpf.Kprobe
	case lang.ProbeSkbRet:
		g.ctx = ctxRegs
		ps.Type = ebpf.Kprobe
		if tg.Fentry {
			g.ctx = ctxArgs
			ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, ebpf.AttachTraceFExit, tg.Name
		}
	case lang.ProbeSkb:
		if tg.Fentry {
			// The fentry backend: a program per function, typed arguments.
			g.ctx = ctxArgs
			ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, ebpf.AttachTraceFEntry, tg.Name
			break
		}
		if tg.Name != "" {
			// The tracepoint fallback: a tp_btf program on one tracepoint.
			g.ctx = ctxArgs
			ps.Type, ps.AttachType, ps.AttachTo = ebpf.Tracing, ebpf.AttachTraceRawTp, tg.Name
			break
		}
		// The kprobe form; the runtime attaches it with kprobe-multi or
		// kprobes, to every function whose skb is at argument skbArg.
		g.ctx = ctxRegs
		ps.Type = ebpf.Kprobe
	case lang.ProbeProfile:
		// A perf_event program, which the runtime attaches to a software
		// CPU-clock event on every CPU.
		g.ctx = ctxArgs
		ps.Type = ebpf.PerfEvent
	case lang.ProbeTest, lang.ProbeBench:
		// Run by --test and --bench with BPF_PROG_TEST_RUN, on a packet
		// of 14 zero bytes, as bpftrace runs them: XDP programs, whose
		// test runs repeat and are timed by the kernel (testprobe.go).
		g.ctx = ctxArgs
		ps.Type = ebpf.XDP
	case lang.ProbeBegin, lang.ProbeEnd, lang.ProbeInterval, lang.ProbeSelf:
		// Never attached: the runtime runs these with BPF_PROG_TEST_RUN, at
		// start, at the end, or on a timer.
		g.ctx = ctxArgs
		ps.Type = ebpf.RawTracepoint
	default:
		return nil, fmt.Errorf("%s probes are not compiled yet", spec.Spec.Kind)
	}
	// R9 keeps the context for the whole program.
	g.emit(asm.Mov.Reg(asm.R9, asm.R1))
	if give == 0 && OnEvents(spec.Spec.Kind) {
		g.stopGate()
	}
	if tg.Return {
		if err := g.returnPrologue(); err != nil {
			return nil, err
		}
	}
	if tg.Cookie {
		if err := g.cookiePrologue(); err != nil {
			return nil, err
		}
	}
	if g.scratchMode() {
		if err := g.scratchPrologue(); err != nil {
			return nil, err
		}
	}
	// Header fields read the IP header parsed once, before the predicate
	// or the body, whichever reads one first.
	parseAt, scanAt := p.Body, p.Body
	if g.usesHeaders(p.Pred) {
		parseAt = nil
		if err := g.parseIP(); err != nil {
			return nil, err
		}
	}
	// So are hook, table and chain, from one look for the netfilter state.
	g.usesTables = g.usesKind(p.Pred, stdlib.SrcNetfilter, "table", "chain") || g.usesKind(p.Body, stdlib.SrcNetfilter, "table", "chain")
	if g.usesKind(p.Pred, stdlib.SrcNetfilter) {
		scanAt = nil
		if err := g.nfScan(); err != nil {
			return nil, err
		}
	}
	body := g.label("body")
	gated := ms.track && g.hasSkb() && gatedProbe(p, spec.Spec.Kind)
	if gated {
		if err := g.trackGate(body); err != nil {
			return nil, err
		}
	}
	if p.Pred != nil {
		if err := g.branch(p.Pred, exitLabel, false); err != nil {
			return nil, err
		}
	}
	if gated || p.Pred != nil {
		g.mark(body)
	}
	if OnEvents(spec.Spec.Kind) {
		if err := g.overheadGates(); err != nil {
			return nil, err
		}
	}
	if parseAt != nil && g.usesHeaders(parseAt) {
		if err := g.parseIP(); err != nil {
			return nil, err
		}
	}
	if scanAt != nil && g.usesKind(scanAt, stdlib.SrcNetfilter) {
		// Before the first statement that reads one, not before the body:
		// the verifier follows each way the scan can end through the code
		// after it, so the statements before are walked once.
		g.nfAt = g.nfPlace(p.Body.Stmts)
	}
	if err := g.startBlock(p.Body); err != nil {
		return nil, err
	}
	if err := g.block(p.Body); err != nil {
		return nil, err
	}
	g.endBlock()
	g.emit(
		asm.Mov.Imm(asm.R0, 0).WithSymbol(exitLabel),
		asm.Return(),
	)
	ps.Instructions = g.endScratch(dropCtxCopy(dropUnreachable(peephole(g.insns))))
	if len(*g.funcs) > 0 {
		ps.Instructions[0] = withFuncInfo(ps.Instructions[0], name, "ctx")
	}
	for _, fn := range *g.funcs {
		ps.Instructions = append(ps.Instructions, fn...)
	}
	if used := mapsUsed(ps.Instructions); len(used) > maxProgMaps {
		return nil, &tooManyMapsError{n: len(used) - btoi(used[OneMap]) - btoi(used[StopMap]), one: used[OneMap], stop: used[StopMap]}
	}
	if err := checkJumps(ps.Instructions); err != nil {
		return nil, err
	}
	prog := &Program{Probe: p, Spec: spec, Name: name, Prog: ps, Attach: attachOf(spec, tg, ps), SkbArg: tg.SkbArg, HasReason: tg.HasReason, ReasonArg: tg.ReasonArg, Cookie: tg.Cookie, Return: tg.Return, Ret: tg.Ret,
		frame: g.frame.high, callee: g.calleeDepth, BPF: tg.bpf}
	if tg.Return && !tg.Fentry {
		// The kprobe form reads the skb its entry stashed.
		prog.SkbArg = -1
	}
	if tg.Fentry {
		prog.Function = tg.Name
	} else {
		prog.Tracepoint = tg.Name
	}
	return prog, nil
}

// unsupportedError is a construct the generator does not handle yet.
type unsupportedError struct {
	span lang.Span
	what string
}

func (e *unsupportedError) Error() string {
	return fmt.Sprintf("%s: %s is not compiled yet", e.span.Start, e.what)
}

func unsupported(n lang.Node, what string) error {
	return &unsupportedError{span: n.Span(), what: what}
}

// maxProgMaps is the kernel's limit on the maps one program uses
// (MAX_USED_MAPS).
const maxProgMaps = 64

// mapsUsed is the set of maps a program's instructions load.
func mapsUsed(insns asm.Instructions) map[string]bool {
	seen := map[string]bool{}
	for _, ins := range insns {
		if ins.IsLoadFromMap() {
			seen[ins.Reference()] = true
		}
	}
	return seen
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
