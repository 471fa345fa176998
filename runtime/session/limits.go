package session

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// A script holds a file descriptor for each map, each program and each
// link (or perf event) at once. Where that is more than the process may
// open, it fails here, before anything loads, with the figures: not
// halfway through loading with "too many open files". (Go raises the soft
// limit of open files to the hard one at start: the hard one is what
// counts.)

// fdSpare is what the process holds besides the script's descriptors: the
// standard streams, BTF handles, the reader's epoll, the Go runtime's own,
// an output file.
const fdSpare = 32

// fdNeed is what a script holds open at once.
type fdNeed struct {
	maps, progs, links, events int
}

func (n fdNeed) total() int { return n.maps + n.progs + n.links + n.events + fdSpare }

// countFDs counts a script's descriptors: its maps and the programs loaded
// together and, with attach, what attaching them opens (funcs says how skb:
// programs attach, nil where none does).
func countFDs(out *codegen.Output, funcs *FuncAttach, attach bool) fdNeed {
	n := fdNeed{maps: len(out.Maps)}
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		cpus = 1
	}
	single := false
	for _, p := range out.Programs {
		if (p.Helper == "" || p.Helper == codegen.HelperEntry) && p.Function == "" {
			n.progs++
		} else {
			// Loaded alone, closed once attached (the link holds it).
			single = true
		}
		if attach {
			n.links += linksOf(p, funcs, cpus)
		}
	}
	if single {
		n.progs++
	}
	if attach && out.PerfBytes > 0 {
		n.events = cpus
	}
	return n
}

// linksOf is how many links or perf events attaching a program opens.
func linksOf(p *codegen.Program, funcs *FuncAttach, cpus int) int {
	switch {
	case p.Helper != "" && p.Helper != codegen.HelperEntry:
		return 1
	case p.Attach.Kind == codegen.AttachKprobes:
		if p.Attach.Multi {
			return 1
		}
		return len(p.Attach.Funcs)
	case p.Function != "":
		return 1
	case p.Attach.Kind == codegen.AttachSkbFuncs:
		if funcs == nil || p.Attach.Multi {
			return 1
		}
		return len(funcTargets(p, funcs))
	}
	switch p.Attach.Kind {
	case codegen.AttachBegin, codegen.AttachEnd, codegen.AttachInterval, codegen.AttachSignal, codegen.AttachTest, codegen.AttachBench:
		return 0
	case codegen.AttachProfile:
		return cpus
	}
	return 1
}

// fdLimitError is a script that needs more descriptors than the process
// may open.
type fdLimitError struct {
	need   fdNeed
	open   int
	limit  uint64
	nrOpen int
}

func (e *fdLimitError) Error() string {
	need := e.need.total() + e.open
	var b strings.Builder
	fmt.Fprintf(&b, "the script needs about %s file descriptors open at once (%s maps, %s programs", thousands(need), thousands(e.need.maps), thousands(e.need.progs))
	if e.need.links > 0 {
		fmt.Fprintf(&b, ", %s links", thousands(e.need.links))
	}
	if e.need.events > 0 {
		fmt.Fprintf(&b, ", %s perf buffers", thousands(e.need.events))
	}
	fmt.Fprintf(&b, "); the limit is %s (RLIMIT_NOFILE, ulimit -n)", thousands(int(min(e.limit, 1<<40))))
	switch {
	case e.nrOpen > 0 && need > e.nrOpen:
		fmt.Fprintf(&b, ", and the kernel lets a process open at most %s (fs.nr_open): trace fewer probes, or probes that share their attach points (those share a program)", thousands(e.nrOpen))
	case e.nrOpen > 0:
		fmt.Fprintf(&b, ": raise it, e.g. ulimit -n %d (as root, up to fs.nr_open: %s here)", roundUp(need), thousands(e.nrOpen))
	default:
		fmt.Fprintf(&b, ": raise it, e.g. ulimit -n %d", roundUp(need))
	}
	return b.String()
}

// roundUp rounds a descriptor count up to a round figure to suggest.
func roundUp(n int) int {
	step := 1000
	if n < 10000 {
		step = 100
	}
	return (n + step) / step * step
}

// checkFDs fails where the script needs more descriptors than the
// process may open, counting those already open.
func checkFDs(out *codegen.Output, funcs *FuncAttach, attach bool) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur == unix.RLIM_INFINITY {
		return nil
	}
	need := countFDs(out, funcs, attach)
	open := openFDs()
	if uint64(need.total()+open) <= lim.Cur {
		return nil
	}
	return &fdLimitError{need: need, open: open, limit: lim.Cur, nrOpen: nrOpen()}
}

// openFDs is how many descriptors the process has open.
func openFDs() int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0
	}
	return len(names) - 1 // the directory's own
}

// nrOpen is the kernel's bound on a process's limit (fs.nr_open), 0 if
// unknown.
func nrOpen() int {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// explainEMFILE says which limit a "too many open files" is, where the
// kernel said it though the count before loading let the script through.
func explainEMFILE(out *codegen.Output, err error) error {
	var lim unix.Rlimit
	var done *emfileError
	if errors.As(err, &done) || unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil {
		return err
	}
	need, cur := countFDs(out, nil, true).total(), int(min(lim.Cur, 1<<40))
	return &emfileError{fmt.Errorf("%w: the process may open %s file descriptors (RLIMIT_NOFILE, ulimit -n), and the script needs about %s; raise it, e.g. ulimit -n %d",
		err, thousands(cur), thousands(need), roundUp(max(need, 2*cur)))}
}

// emfileError is a "too many open files" explained.
type emfileError struct{ error }

func (e *emfileError) Unwrap() error { return e.error }

// Before Linux 5.11, the kernel charges maps and programs to the process's
// locked-memory limit (RLIMIT_MEMLOCK), often 64 KiB or 8 MiB: too little
// for a script's maps. skbtrace lifts it, as libbpf and bpftrace do; where
// it cannot, a refused map says which limit and how much the maps need.

var memlockErr error
var memlockOnce sync.Once

// raiseMemlock lifts RLIMIT_MEMLOCK where the kernel charges BPF memory to
// it; the error, if any, is kept for explainMemlock.
func raiseMemlock() {
	memlockOnce.Do(func() {
		if !kernel.MemlockCharged() {
			return
		}
		inf := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
		if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &inf); err != nil {
			memlockErr = err
		}
	})
}

// explainMemlock says, for a load refused with EPERM on a kernel that
// charges RLIMIT_MEMLOCK, which limit it was and what the maps need; nil
// where that is not the case.
func explainMemlock(out *codegen.Output, err error) error {
	if !kernel.MemlockCharged() || !errors.Is(err, unix.EPERM) {
		return nil
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim) != nil || lim.Cur == unix.RLIM_INFINITY {
		return nil
	}
	why := ""
	if memlockErr != nil {
		why = fmt.Sprintf(" (skbtrace could not lift it: %v)", memlockErr)
	}
	return fmt.Errorf("this kernel (before Linux 5.11) charges BPF maps to the locked-memory limit, which is %s KiB%s; the script's %s maps need about %s KiB: raise it with ulimit -l unlimited, or run as root",
		thousands(int(lim.Cur>>10)), why, thousands(len(out.Maps)), thousands(int(mapsBytes(out)>>10)))
}

// mapsBytes estimates the kernel memory a script's maps take as the
// kernel charges it: their elements, preallocated, and hash buckets.
func mapsBytes(out *codegen.Output) uint64 {
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		cpus = 1
	}
	var n uint64
	for _, m := range out.Maps {
		entries, value := uint64(m.MaxEntries), uint64(m.ValueSize+7)&^7
		switch m.Type {
		case ebpf.RingBuf:
			n += entries
		case ebpf.PerfEventArray:
			n += uint64(cpus) * 8
		case ebpf.Array:
			n += entries * value
		case ebpf.PerCPUArray:
			n += entries * value * uint64(cpus)
		case ebpf.PerCPUHash, ebpf.LRUCPUHash:
			n += entries*(uint64(m.KeySize+7)&^7+value*uint64(cpus)+48) + pow2(entries)*16
		default:
			n += entries*(uint64(m.KeySize+7)&^7+value+48) + pow2(entries)*16
		}
	}
	return n
}

func pow2(n uint64) uint64 {
	p := uint64(1)
	for p < n {
		p <<= 1
	}
	return p
}

// thousands writes n with commas between its thousands.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
