package session

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
)

// The reasons the kernel skips a program's run, as the summary says them.
const (
	reasonRecursion = "recursion: it was already running on that CPU"
	reasonActive    = "recursion: another BPF program was running on that CPU"
	reasonKprobe    = "the kprobe missed it (a kprobe hit inside another, or no free kretprobe instance)"
	reasonFprobe    = "the fprobe missed it (recursion)"
)

// Kernels that count a kind of skipped run: a trampoline's (fentry,
// fexit) since 5.12; a raw tracepoint's (tracepoint: read by its raw
// arguments, tp_btf) since 6.1 (Debian's 6.1 counts them, 5.10 does not);
// a kprobe's, a kprobe-multi's and a perf event tracepoint's program, and
// the kprobe links' own misses, since 6.7.
var (
	countsTrampoline = [2]int{5, 12}
	countsRawTp      = [2]int{6, 1}
	countsOthers     = [2]int{6, 7}
)

// missKind is which of those counts a program's skipped runs.
type missKind int

const (
	missTrampoline missKind = iota
	missRawTp
	missOthers
)

// missKindOf says how the kernel runs a program, for what it counts.
func missKindOf(p *codegen.Program) missKind {
	switch {
	case isTrampoline(p):
		return missTrampoline
	case p.Prog.Type == ebpf.RawTracepoint || p.Prog.Type == ebpf.Tracing && p.Prog.AttachType == ebpf.AttachTraceRawTp:
		return missRawTp
	}
	return missOthers
}

// uncountedReasons say, for each kind, what a kernel before its version
// does not count.
var uncountedReasons = [...]struct {
	since [2]int
	say   string
}{
	missTrampoline: {countsTrampoline, "recursion misses of fentry and fexit programs (Linux 5.12 and later count them)"},
	missRawTp:      {countsRawTp, "recursion misses of raw tracepoint programs (Linux 6.1 and later count them)"},
	missOthers:     {countsOthers, "recursion misses of kprobe and perf event tracepoint programs, and kprobes' own misses (Linux 6.7 and later count them)"},
}

// readProgramMisses adds the runs of the session's attached programs the
// kernel skipped, by probe: each program's recursion_misses (bpf_prog_info)
// and, on kprobe and kprobe-multi links, the link's missed count. The
// programs are found through the links (an fentry program's own
// descriptor is closed once it is linked) and the collection's. Where the
// kernel keeps no such count, one Uncounted entry says so.
func (s *Session) readProgramMisses(m *Misses) {
	if s.coll == nil {
		return
	}
	release := kernelRelease()
	// The kernel's name of a program (its first 15 characters) names
	// its probe; a program is of one kind of attach.
	probeOf := map[string]*codegen.Program{}
	kinds := map[missKind]bool{}
	for _, p := range s.out.Programs {
		if p.Prog == nil || !attached(p) || (p.Helper != "" && p.Helper != codegen.HelperEntry) {
			continue
		}
		probeOf[kernelName(p.Prog.Name)] = p
		kinds[missKindOf(p)] = true
	}
	for k, u := range uncountedReasons {
		if kinds[missKind(k)] && !atLeast(release, u.since) {
			m.Add(Miss{What: MissProgramsSkipped, Reason: u.say, Uncounted: true})
		}
	}
	s.eachProgram(func(prog *ebpf.Program, info *ebpf.ProgramInfo) {
		p := probeOf[info.Name]
		if p == nil {
			return
		}
		st, err := prog.Stats()
		if err != nil || st.RecursionMisses == 0 {
			return
		}
		reason := reasonActive
		if missKindOf(p) != missOthers {
			reason = reasonRecursion
		}
		m.Add(Miss{What: MissProgramsSkipped, Probe: probeLabel(p), Reason: reason, Count: st.RecursionMisses})
	}, func(info *link.Info) { s.linkMisses(m, info, probeOf) })
}

// eachProgram calls fn once for each program the session runs: those its
// links run (those attached while tracing too: latehelpers.go), opened by
// ID (an fentry program's own descriptor is closed once linked), then the
// collection's, each program ID once. onLink, if not nil, is given each
// link's info.
func (s *Session) eachProgram(fn func(prog *ebpf.Program, info *ebpf.ProgramInfo), onLink func(*link.Info)) {
	seen := map[ebpf.ProgramID]bool{}
	visit := func(prog *ebpf.Program) {
		info, err := prog.Info()
		if err != nil {
			return
		}
		id, ok := info.ID()
		if !ok || seen[id] {
			return
		}
		seen[id] = true
		fn(prog, info)
	}
	s.lateMu.Lock()
	links := append(slices.Clip(s.links), s.lateLinks...)
	s.lateMu.Unlock()
	for _, l := range links {
		info, err := l.Info()
		if err != nil {
			continue
		}
		if !seen[info.Program] {
			if prog, err := ebpf.NewProgramFromID(info.Program); err == nil {
				visit(prog)
				prog.Close()
			}
		}
		if onLink != nil {
			onLink(info)
		}
	}
	for _, prog := range s.coll.Programs {
		visit(prog)
	}
}

// linkMisses adds a kprobe-multi or kprobe link's own missed count: the
// fprobe's or kprobe's misses, apart from its program's skipped runs.
func (s *Session) linkMisses(m *Misses, info *link.Info, probeOf map[string]*codegen.Program) {
	var n uint64
	reason := reasonKprobe
	switch info.Type {
	case link.KprobeMultiType:
		km := info.KprobeMulti()
		if km == nil {
			return
		}
		n, reason = km.Missed, reasonFprobe
	case link.PerfEventType:
		pe := info.PerfEvent()
		if pe == nil {
			return
		}
		kp := pe.Kprobe()
		if kp == nil {
			return
		}
		n = kp.Missed
	default:
		return
	}
	if n == 0 {
		return
	}
	probe := "other"
	if prog, err := ebpf.NewProgramFromID(info.Program); err == nil {
		if pi, err := prog.Info(); err == nil && probeOf[pi.Name] != nil {
			probe = probeLabel(probeOf[pi.Name])
		}
		prog.Close()
	}
	m.Add(Miss{What: MissProgramsSkipped, Probe: probe, Reason: reason, Count: n})
}

// probeLabel names a program's probe as the script writes it; an skbret:
// probe's entry programs are its own.
func probeLabel(p *codegen.Program) string {
	if p.Attach.Text != "" {
		return p.Attach.Text
	}
	return p.Attach.Kind.String()
}

// isTrampoline reports whether the program runs through a BPF trampoline
// (fentry, fexit), whose skipped runs the kernel counted first.
func isTrampoline(p *codegen.Program) bool {
	return p.Prog.Type == ebpf.Tracing && (p.Prog.AttachType == ebpf.AttachTraceFEntry || p.Prog.AttachType == ebpf.AttachTraceFExit)
}

// kernelName is a program's name as the kernel keeps it: its first 15
// bytes.
func kernelName(name string) string {
	if len(name) > unix.BPF_OBJ_NAME_LEN-1 {
		return name[:unix.BPF_OBJ_NAME_LEN-1]
	}
	return name
}

// kernelRelease is the running kernel's major and minor version; zero
// where uname's release cannot be read.
func kernelRelease() [2]int {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return [2]int{}
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return [2]int{}
	}
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return [2]int{major, minor}
}

// atLeast reports whether release is v or later; an unknown release (zero)
// is taken as recent.
func atLeast(release, v [2]int) bool {
	if release == [2]int{} {
		return true
	}
	return release[0] > v[0] || release[0] == v[0] && release[1] >= v[1]
}
