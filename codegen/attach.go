package codegen

import (
	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// Backend is how programs attach to kernel functions: skb:'s kprobe form
// and kprobe: globs with kprobe-multi or a kprobe each, skb: with fentry.
type Backend string

// The backends, fastest first; BackendTracepoint is skb:'s fallback where
// no function backend works.
const (
	BackendKprobeMulti Backend = "kprobe-multi"
	BackendFentry      Backend = "fentry"
	BackendKprobe      Backend = "kprobe"
	BackendTracepoint  Backend = "tracepoint"
)

// AttachKind is what a program attaches to, or how the runtime runs it.
type AttachKind uint8

// The kinds of attach points.
const (
	// AttachTracepoint: a classic tracepoint, Category and Name (a
	// tracepoint read by its tracefs format).
	AttachTracepoint AttachKind = iota + 1
	// AttachTpBTF: a tp_btf program on the tracepoint Name.
	AttachTpBTF
	// AttachFentry and AttachFexit: a tracing program on the kernel
	// function Func.
	AttachFentry
	AttachFexit
	// AttachKprobe: a kprobe (a kretprobe where Return) on Func.
	AttachKprobe
	// AttachKprobes: the functions Funcs (a kprobe: or kretprobe: glob's
	// of one shape), all with one kprobe-multi link where Multi, else a
	// kprobe each.
	AttachKprobes
	// AttachSkbFuncs: skb:'s and skbret:'s kprobe form, attached to the
	// functions of the glob Glob that discovery found with the skb (and
	// the drop reason, or the return class) where the program reads them
	// (Program.SkbArg, ReasonArg, Ret), with one kprobe-multi link where
	// Multi, else a kprobe each; Glob is "" on skbret:'s entry programs,
	// which attach to every function an skbret: glob matched.
	AttachSkbFuncs
	// AttachUprobe: a uprobe (a uretprobe where Return) on Func of the
	// executable Binary, at Offset in its file.
	AttachUprobe
	// AttachBPF: fentry (fexit where Return) on a loaded BPF program's
	// function (Program.BPF).
	AttachBPF
	// AttachProfile: a perf event program on every CPU's clock, every
	// Period nanoseconds or Hz times a second.
	AttachProfile
	// AttachInterval: run by the runtime every Period nanoseconds.
	AttachInterval
	// AttachBegin and AttachEnd: run by the runtime once, at the start
	// and at the end.
	AttachBegin
	AttachEnd
	// AttachSignal: run by the runtime when skbtrace gets the signal
	// Name (self:signal:SIGUSR1).
	AttachSignal
	// AttachTest and AttachBench: test:Name and bench:Name, run by
	// --test and --bench only (testprobe.go).
	AttachTest
	AttachBench
)

var attachKindNames = [...]string{AttachTracepoint: "tracepoint", AttachTpBTF: "tp_btf", AttachFentry: "fentry", AttachFexit: "fexit",
	AttachKprobe: "kprobe", AttachKprobes: "kprobes", AttachSkbFuncs: "skb functions", AttachUprobe: "uprobe", AttachBPF: "bpf",
	AttachProfile: "profile", AttachInterval: "interval", AttachBegin: "BEGIN", AttachEnd: "END", AttachSignal: "self:signal",
	AttachTest: "test", AttachBench: "bench"}

func (k AttachKind) String() string {
	if int(k) < len(attachKindNames) && attachKindNames[k] != "" {
		return attachKindNames[k]
	}
	return "none"
}

// Attach is where a program attaches, decided when it is compiled: the
// runtime attaches by it alone.
type Attach struct {
	Kind AttachKind
	// Text names the probe in messages: the spec as written
	// (kprobe:tcp_*), a uprobe's with its binary found; "skbret:" on
	// skbret:'s entry programs, "track()" on its helpers. ProbeKind is
	// the spec's kind as the script names it (tracepoint, skb, fentry).
	Text, ProbeKind string
	Category, Name  string
	Func            string
	Funcs           []string
	Glob            string
	// Return is set on the return side: kretprobe, uretprobe, skbret:,
	// bpfret:.
	Return bool
	// Multi says the program is loaded for kprobe-multi links
	// (Options.Backend, Options.GlobBackend).
	Multi  bool
	Binary string
	// Offset is a uprobe's place in Binary's file, or a kprobe's bytes
	// into Func (kprobe:FN+OFFSET).
	Offset uint64
	// Period is in nanoseconds.
	Period, Hz uint64
}

// OnEvents reports whether the kernel runs the program on events, so
// that it reads StopMap first: BEGIN, END and interval programs are run by
// the runtime.
func (a Attach) OnEvents() bool {
	switch a.Kind {
	case AttachBegin, AttachEnd, AttachInterval, AttachSignal, AttachTest, AttachBench:
		return false
	}
	return true
}

// attachOf is where a probe spec's program for target tg attaches.
func attachOf(spec *check.SpecInfo, tg SkbTarget, ps *ebpf.ProgramSpec) Attach {
	sp := spec.Spec
	a := Attach{Text: sp.Text, ProbeKind: string(sp.Kind)}
	switch sp.Kind {
	case lang.ProbeTracepoint:
		a.Kind, a.Name = AttachTpBTF, sp.Name
		if ps.Type == ebpf.TracePoint {
			a.Kind, a.Category = AttachTracepoint, spec.Category
		}
	case lang.ProbeFentry, lang.ProbeFexit:
		a.Kind, a.Func = AttachFentry, ps.AttachTo
		if sp.Kind == lang.ProbeFexit {
			a.Kind = AttachFexit
		}
	case lang.ProbeKprobe, lang.ProbeKretprobe:
		a.Kind, a.Func, a.Return, a.Offset = AttachKprobe, ps.AttachTo, sp.Kind == lang.ProbeKretprobe, sp.Offset
	case lang.ProbeUprobe, lang.ProbeUretprobe:
		a.Kind, a.Func, a.Binary, a.Offset, a.Return = AttachUprobe, spec.Func, spec.Binary, spec.FileOffset, sp.Kind == lang.ProbeUretprobe
		if n := spec.UserProbeName(); n != "" {
			a.Text = n
		}
	case lang.ProbeBpf, lang.ProbeBpfRet:
		a.Kind, a.Return = AttachBPF, sp.Kind == lang.ProbeBpfRet
	case lang.ProbeSkb, lang.ProbeSkbRet:
		a.Return = tg.Return
		switch {
		case tg.Fentry && tg.Return:
			a.Kind, a.Func = AttachFexit, tg.Name
		case tg.Fentry:
			a.Kind, a.Func = AttachFentry, tg.Name
		case tg.Name != "":
			a.Kind, a.Name = AttachTpBTF, tg.Name
		default:
			a.Kind, a.Glob = AttachSkbFuncs, sp.Target
		}
	case lang.ProbeProfile:
		a.Kind, a.Period, a.Hz = AttachProfile, sp.Period, sp.Hz
	case lang.ProbeInterval:
		a.Kind, a.Period = AttachInterval, sp.Period
	case lang.ProbeBegin:
		a.Kind = AttachBegin
	case lang.ProbeEnd:
		a.Kind = AttachEnd
	case lang.ProbeSelf:
		a.Kind, a.Name = AttachSignal, sp.Name
	case lang.ProbeTest:
		a.Kind, a.Name = AttachTest, sp.Name
	case lang.ProbeBench:
		a.Kind, a.Name = AttachBench, sp.Name
	}
	return a
}

// applyBackend makes the programs attached with kprobe-multi links
// kprobe-multi programs, which is how the kernel takes them: skb:'s kprobe
// form (and skbret:'s entries) where the backend is kprobe-multi, kprobe:
// globs' programs where their backend is. A merged program's probes are
// rebuilt from it (Unmerge) and so are too.
func applyBackend(progs []*Program, opts Options) {
	for _, p := range progs {
		multi := p.Attach.Kind == AttachSkbFuncs && opts.Backend == BackendKprobeMulti ||
			p.Attach.Kind == AttachKprobes && opts.GlobBackend == BackendKprobeMulti
		if !multi {
			continue
		}
		p.Attach.Multi = true
		p.Prog.AttachType = ebpf.AttachTraceKprobeMulti
		for _, m := range p.Merged {
			m.Attach.Multi = true
		}
	}
}
