package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/phase"
	"github.com/skbtrace/skbtrace/runtime/attach"
	"github.com/skbtrace/skbtrace/runtime/output"
	"github.com/skbtrace/skbtrace/runtime/rules"
)

// Session is a loaded, attached script.
type Session struct {
	out   *codegen.Output
	coll  *ebpf.Collection
	links []link.Link
	// profiles are the profile probes' perf events.
	profiles []*profileEvents
	// fmt formats values: the printer's, and map keys read for metrics.
	fmt *output.Values
	// pr prints the records and the maps in the chosen format.
	pr *output.Printer
	// events reads the ring buffer; done reports the reader's end.
	events eventReader
	done   chan error
	w      io.Writer
	// exited is closed when a program calls exit().
	exited   chan struct{}
	exitOnce sync.Once
	// exitCode is the first exit()'s code.
	exitCode int
	// stopTimers ends the interval probes; timers waits for them.
	stopTimers chan struct{}
	timers     sync.WaitGroup
	// stats is what attaching skb: probes to functions came to; a
	// progressive start's background attach replaces it when done
	// (statsMu).
	stats   *AttachStats
	statsMu sync.Mutex
	// restStop ends a progressive start's background attach, restDone is
	// closed when it has ended, and restLinks are its links until then
	// (progressive.go).
	restStop  *atomic.Bool
	restDone  chan struct{}
	restLinks []link.Link
	// lateWG counts the work attaching while tracing (track()'s helpers
	// on trampolines, kprobe-multi links of functions off the packet's
	// main path), and lateLinks are its links until Detach takes them
	// (lateMu): latehelpers.go, latemulti.go.
	lateWG sync.WaitGroup
	// lateStop is set once tracing ends: work attaching while tracing
	// that has not begun is left (latehelpers.go).
	lateStop atomic.Bool
	// stopClock times the end, for -v (stopclock.go).
	stopClock stopClock
	// lateMulti are the kprobe-multi programs' functions attachFuncs left
	// for a link while tracing (latemulti.go).
	lateMulti []lateLink
	lateMu    sync.Mutex
	lateLinks []link.Link
	// progress, when set, gets a progress line while many links attach or
	// detach.
	progress io.Writer
	// verbose is Options.Verbose; warn is Options.Warn, or a no-op.
	verbose bool
	warn    func(format string, args ...any)
	// records counts the records read from the event buffer (Records).
	records atomic.Uint64
	// lateEv hands the printer the events of bpf: programs attached
	// while tracing (bpfwatch.go); bpfKnown, where bpf: probes take
	// them, are the programs loaded before.
	lateEv   *output.Late
	bpfKnown map[uint32]bool
	// scope keeps the pod filters' map current (scope.go); nil without.
	scope *scopeKeeper
	// misses is what Misses reads besides the kernel (misses.go).
	misses missState
	// ids are the kernel's BTF type IDs the BTF cache holds
	// (Options.KernelTypes), for loading helpers; nil without.
	ids KernelTypeIDs
}

// FuncStats is what attaching skb: probes to functions came to, or nil.
// With a progressive start, it is the main path's until the rest is
// attached too.
func (s *Session) FuncStats() *AttachStats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.stats
}

// Shared counts the script's programs as loaded, and the probes they run:
// probes on one attach point share a program (codegen's Program.Merged).
// Helpers are not counted.
func (s *Session) Shared() (probes, programs int) {
	for _, p := range s.out.Programs {
		if p.Helper == "" {
			probes += p.Probes()
			programs++
		}
	}
	return probes, programs
}

// Exited is closed when the script calls exit().
func (s *Session) Exited() <-chan struct{} { return s.exited }

// SetCpid tells the programs -c's command's process id (cpid), where
// they read it.
func (s *Session) SetCpid(pid int) error {
	m := s.coll.Maps[codegen.CpidMap]
	if m == nil {
		return nil
	}
	return m.Put(uint32(0), uint32(pid))
}

// ExitCode is the code of the exit(code) that ended tracing: 0 where
// none did, or exit() gave none.
func (s *Session) ExitCode() int {
	select {
	case <-s.exited:
		return s.exitCode
	default:
		return 0
	}
}

// control acts on a control record from the ring buffer.
func (s *Session) control(ev *codegen.Event) error {
	switch ev.Kind {
	case codegen.EventExit:
		s.exitOnce.Do(func() {
			s.exitCode = ev.Code
			close(s.exited)
		})
	case codegen.EventPrintMap:
		l := s.out.Layout(ev.Map)
		if l == nil {
			return nil
		}
		m, err := s.mapData(l)
		if err != nil {
			return err
		}
		return s.pr.Map(s.w, m, output.View{Top: ev.Top, Div: ev.Div})
	case codegen.EventClearMap, codegen.EventZeroMap:
		return s.clearMap(ev.Map, ev.Kind == codegen.EventZeroMap)
	}
	return nil
}

// runProgram runs a BEGIN, END or interval program once.
func runProgram(p *ebpf.Program) error {
	if _, err := p.Run(&ebpf.RunOptions{}); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	return nil
}

// Options configure a session.
type Options struct {
	// Format names the output format (output.Formats: text, json,
	// bpftrace, timeline, timeline-json, graph, graph-json); "": text.
	Format string
	// DecimalOffsets prints stack frames as bpftrace does (sym+144), for
	// a script written for bpftrace.
	DecimalOffsets bool
	// Verbose keeps the kernel's whole verifier log in errors.
	Verbose bool
	// Warn receives what the session could not do but went on without,
	// one line each (nil: discarded).
	Warn func(format string, args ...any)
	// Funcs says how skb: programs attach to kernel functions, when a
	// function backend is in use.
	Funcs *FuncAttach
	// Capture receives capture()'s frames as pcapng, Snaplen (the
	// codegen option's) bytes at most each.
	Capture io.Writer
	Snaplen int
	// Names annotates network namespaces, devices, addresses and
	// processes with their pods and containers (nil: IDs alone).
	Names output.Names
	// Rules names the rule or action behind a drop for rule() values
	// (nil: the kernel's structures alone).
	Rules *rules.Namer
	// Scope is what the pod filters let through, where the script tests
	// it (pipeline.Config.Scope).
	Scope *Scope
	// KernelTypes gives the kernel's type IDs of tracing programs'
	// targets, so that loading them needs not decode the kernel's whole
	// BTF (LoadWith); nil: cilium/ebpf finds them there.
	KernelTypes KernelTypeIDs
}

// Start loads a compiled script, starts printing its records to w, and
// attaches every program. On error, whatever was attached is detached again.
func Start(out *codegen.Output, w io.Writer, opts Options) (_ *Session, err error) {
	defer func() {
		if errors.Is(err, unix.EMFILE) {
			err = explainEMFILE(out, err)
		}
	}()
	for _, p := range out.Programs {
		if p.Attach.Kind == codegen.AttachSkbFuncs && opts.Funcs == nil {
			return nil, fmt.Errorf("%s: no function backend was chosen for skb: probes", p.Attach.Text)
		}
	}
	if err := checkFDs(out, opts.Funcs, true); err != nil {
		return nil, err
	}
	coll, err := LoadWith(out, opts.Verbose, opts.KernelTypes)
	if err != nil {
		return nil, err
	}
	phase.Mark("load")
	s := &Session{out: out, coll: coll, fmt: output.NewValues(), w: w,
		exited: make(chan struct{}), stopTimers: make(chan struct{}), verbose: opts.Verbose, warn: opts.Warn, lateEv: &output.Late{}, ids: opts.KernelTypes}
	if s.warn == nil {
		s.warn = func(string, ...any) {}
	}
	s.fmt.SetProbeNames(out.ProbeNames)
	s.fmt.SetNames(opts.Names)
	s.fmt.SetRules(opts.Rules)
	if opts.DecimalOffsets {
		s.fmt.DecimalOffsets()
	}
	if strings.HasPrefix(opts.Format, "bpftrace") {
		s.fmt.FullEnumNames()
	}
	s.pr, err = output.New(w, out.Events, output.Config{Format: opts.Format, Values: s.fmt, Control: s.control,
		Records: &s.records, Rets: retClasses(opts.Funcs), Warn: s.warn, Late: s.lateEv,
		Capture: opts.Capture, Snaplen: opts.Snaplen, Truncated: &s.misses.truncated})
	if err != nil {
		s.Close()
		return nil, err
	}
	if m := coll.Maps[codegen.EventsMap]; m != nil {
		rd, err := newEventReader(m, out.PerfBytes)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.events, s.done = rd, make(chan error, 1)
		go func() {
			err := s.pr.Read(rd)
			if err != nil {
				// Nothing more is printed: tracing ends, as on exit(),
				// and Detach reports why.
				s.exitOnce.Do(func() { close(s.exited) })
			}
			s.done <- err
		}()
	}
	s.fmt.SetStacks(coll.Maps[codegen.StackMap])
	if m := coll.Maps[codegen.StartMap]; m != nil {
		if err := m.Put(uint32(0), monotonicNow()); err != nil {
			s.Close()
			return nil, fmt.Errorf("set the start time: %w", err)
		}
	}
	if err := s.keepScope(opts.Scope); err != nil {
		s.Close()
		return nil, err
	}
	warmProgRun(out)
	for _, p := range out.Programs {
		switch {
		case p.Helper != "" || p.Function != "":
			continue // helpers and programs loaded alone come next
		}
		switch p.Attach.Kind {
		case codegen.AttachSkbFuncs, codegen.AttachKprobes, codegen.AttachBPF:
			continue // skb: programs on functions, kprobe: globs and bpf: programs come next
		case codegen.AttachBegin, codegen.AttachEnd, codegen.AttachInterval, codegen.AttachSignal, codegen.AttachTest, codegen.AttachBench:
			continue
		case codegen.AttachProfile:
			pe, err := attachProfile(p.Attach, coll.Programs[p.Name])
			if err != nil {
				s.Close()
				return nil, err
			}
			s.profiles = append(s.profiles, pe)
			continue
		}
		l, err := attach.Program(p, coll.Programs[p.Name])
		if err != nil {
			s.Close()
			return nil, err
		}
		s.links = append(s.links, l)
	}
	if err := s.attachBPF(); err != nil {
		s.Close()
		return nil, err
	}
	phase.Mark("attach other")
	if opts.Funcs != nil {
		s.progress = opts.Funcs.Progress
		st, err := s.attachFuncs(opts.Funcs)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.statsMu.Lock()
		s.stats = st
		s.statsMu.Unlock()
		if len(s.lateMulti) > 0 && st != nil {
			s.attachMultiLate(s.lateMulti, opts.Funcs, st)
		}
		phase.Mark("attach skb")
	}
	if opts.Funcs != nil && opts.Funcs.LateWork && opts.Funcs.Backend != "" && opts.Funcs.Backend != BackendTracepoint {
		// skb: on functions: the helpers on trampolines attach while
		// tracing (latehelpers.go).
		s.attachHelpers(opts.Warn, notOnTrampoline, true, &s.links)
		s.attachHelpersLate(opts.Warn)
	} else {
		s.attachHelpers(opts.Warn, nil, true, &s.links)
	}
	phase.Mark("track helpers")
	if err := s.runAll(codegen.AttachBegin); err != nil {
		s.Close()
		return nil, err
	}
	for _, p := range out.Programs {
		if p.Helper == "" && p.Attach.Kind == codegen.AttachInterval {
			prog := coll.Programs[p.Name]
			s.every(time.Duration(p.Attach.Period), func() bool { runProgram(prog); return false })
		}
	}
	s.onSignals()
	if s.bpfKnown != nil {
		s.watchBPF(s.bpfKnown)
	}
	return s, nil
}

// runAll runs every program of a kind (BEGIN, END) once, in script order.
func (s *Session) runAll(kind codegen.AttachKind) error {
	for _, p := range s.out.Programs {
		if p.Helper == "" && p.Attach.Kind == kind {
			if err := runProgram(s.coll.Programs[p.Name]); err != nil {
				return fmt.Errorf("%s: %w", p.Attach.ProbeKind, err)
			}
		}
	}
	return nil
}

// every calls tick every period until Detach, or until tick reports
// that it is done: interval programs and the watch for BPF programs.
func (s *Session) every(period time.Duration, tick func() (done bool)) {
	s.timers.Add(1)
	go func() {
		defer s.timers.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-s.stopTimers:
				return
			case <-t.C:
				if tick() {
					return
				}
			}
		}
	}()
}

// Close detaches every program and frees the maps. The links may be
// closed by a helper process after Close returns (release).
func (s *Session) Close() {
	s.stopClock.mark("maps and summary")
	if s.scope != nil {
		s.scope.close()
	}
	s.Detach()
	s.release()
	s.stopClock.mark("links handed off")
	if s.coll != nil {
		s.coll.Close()
		s.coll = nil
	}
	s.stopClock.mark("programs and maps closed")
	if s.verbose && len(s.stopClock.parts) > 0 {
		s.warn("%s", s.stopClock.String())
	}
}

// Detach ends tracing: it switches the programs off (or, where they have
// no switch, detaches them), runs END, then prints the records still in
// the ring buffer. The maps stay, so they can be printed; the links are
// closed by Close.
func (s *Session) Detach() error {
	first := s.stopTimers != nil
	if first {
		s.stopClock.start()
	}
	s.stopRest()
	s.waitLate()
	if first {
		s.stopClock.mark("background attach")
	}
	if s.stopTimers != nil {
		close(s.stopTimers)
		s.timers.Wait()
		s.stopTimers = nil
		for _, pe := range s.profiles {
			pe.Close()
		}
		s.profiles = nil
		s.keepProgramMisses()
		if !s.switchOff() {
			closeLinks(s.links, s.progress)
			s.links = nil
		}
		s.stopClock.mark("switch off")
		if err := s.runAll(codegen.AttachEnd); err != nil {
			return err
		}
	}
	if s.events == nil {
		return nil
	}
	// Flush wakes the reader, which prints what is pending, then stops.
	if err := s.events.Flush(); err != nil {
		return err
	}
	err := <-s.done
	s.events.Close()
	s.events = nil
	s.stopClock.mark("END and events")
	return err
}

// Lost is how many records the programs could not write to the ring or
// perf buffer, each counted once, and which of the two buffers it was.
// Call it after Detach.
func (s *Session) Lost() (n uint64, buffer string) {
	buffer = "ring buffer"
	if m := s.coll.Maps[codegen.EventsMap]; m != nil && m.Type() == ebpf.PerfEventArray {
		buffer = "perf buffer"
	}
	m := s.coll.Maps[codegen.LostMap]
	if m == nil {
		return 0, buffer
	}
	if err := m.Lookup(uint32(0), &n); err != nil {
		return 0, buffer
	}
	return n, buffer
}

// attachHelpers loads and attaches track()'s helpers, those which
// (nil: all) reports true for, their links going to links; with sample,
// --sample's too. Each that fails is a feature lost, said once, not a
// failed session. It reports how many attached.
func (s *Session) attachHelpers(warn func(string, ...any), which func(*codegen.Program) bool, sample bool, links *[]link.Link) int {
	if warn == nil {
		warn = func(string, ...any) {}
	}
	var follow, edges, forget []string
	var followErr, edgeErr, forgetErr error
	if sample {
		s.attachUnsample(warn)
	}
	n := 0
	for _, p := range s.out.Programs {
		if p.Helper == "" || p.Helper == codegen.HelperEntry || p.Helper == codegen.HelperUnsample || p.Helper == codegen.HelperUnsampleFree {
			continue
		}
		if which != nil && !which(p) {
			continue
		}
		prog, err := s.loadHelper(p)
		var l link.Link
		if err == nil {
			l, err = link.AttachTracing(link.TracingOptions{Program: prog, AttachType: p.Prog.AttachType})
			prog.Close()
		}
		switch {
		case err == nil:
			*links = append(*links, l)
			n++
			if p.Helper == codegen.HelperFollow {
				follow = append(follow, p.Prog.AttachTo)
			}
			if p.Helper == codegen.HelperEdge {
				edges = append(edges, p.Prog.AttachTo)
			}
			if p.Helper == codegen.HelperForget {
				forget = append(forget, p.Prog.AttachTo)
			}
		case p.Helper == codegen.HelperFollow:
			followErr = err
		case p.Helper == codegen.HelperEdge:
			edgeErr = err
		case p.Helper == codegen.HelperForget:
			// Some kernels lack one of them (napi_skb_cache_put: 5.12).
			forgetErr = err
		default:
			warn("track(): cannot watch %s to forget freed skbs (%v); a new skb at a freed one's address may be followed", p.Prog.AttachTo, err)
		}
	}
	switch {
	case followErr == nil:
	case errors.Is(followErr, os.ErrPermission) && len(follow) == 0:
		warn("track(): clones and copies are not followed: this kernel refuses fexit programs even to root")
	default:
		warn("track(): clones and copies are followed through %d of %d functions: %v", len(follow), len(codegen.CopyFuncs), followErr)
	}
	if edgeErr != nil {
		warn("track(): %s", codegen.EdgesMissed(edges, edgeErr))
	}
	if len(forget) == 0 && forgetErr != nil && !errors.Is(forgetErr, os.ErrPermission) {
		warn("track(): freed skbs are forgotten only at the free tracepoints (%v): a new skb at the address of one freed without them (a coalesced TCP segment) may be followed", forgetErr)
	}
	return n
}

// monotonicNow is CLOCK_MONOTONIC in nanoseconds, bpf_ktime_get_ns's clock.
func monotonicNow() uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// warmProgRun makes cilium/ebpf probe for BPF_PROG_RUN before anything is
// attached, where the script has BEGIN, END or interval probes. The probe
// test-runs a socket filter on a packet, which the kernel then frees: done
// after attaching, it would show up in the script's own kfree_skb counts.
func warmProgRun(out *codegen.Output) {
	for _, p := range out.Programs {
		switch p.Attach.Kind {
		case codegen.AttachBegin, codegen.AttachEnd, codegen.AttachInterval, codegen.AttachSignal, codegen.AttachTest, codegen.AttachBench:
			prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.RawTracepoint, License: "GPL",
				Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
			if err == nil {
				prog.Run(&ebpf.RunOptions{})
				prog.Close()
			}
			return
		}
	}
}
