package session

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// FuncAttach says where skb: programs attach when a function backend is in
// use.
type FuncAttach struct {
	Backend Backend
	// Funcs, by skb: glob, are the functions that glob matched.
	Funcs map[string][]kernel.SkbFunc
	// Ret, by skbret: glob, are the functions that glob matched; Entries
	// all of them once, where the entry programs attach.
	Ret     map[string][]kernel.SkbFunc
	Entries []kernel.SkbFunc
	// Kprobe is how the programs of kprobe: and kretprobe: globs attach
	// (kprobe-multi or kprobe); their functions are in the programs.
	Kprobe Backend
	// Progress, when set, gets a progress line while many probes attach
	// and detach (the CLI sets it when stderr is a terminal).
	Progress io.Writer
	// Progressive attaches the functions of a packet's main path first
	// and returns, the others attaching while tracing; Done then gets
	// what attaching all of them came to, once it is done (from another
	// goroutine).
	Progressive bool
	Done        func(*AttachStats)
	// LateWork attaches while tracing, after Start returns, what a
	// packet's main path needs not: track()'s helpers on trampolines
	// (latehelpers.go) and, on kprobe-multi, a link of the functions off
	// it (latemulti.go). Not where a command (-c) starts once
	// Start returns, whose packets should meet them all.
	LateWork bool
}

// AttachStats is what attaching skb: probes to functions came to.
type AttachStats struct {
	Backend  Backend
	Attached int
	// Entries counts the entry programs skbret: probes attach.
	Entries int
	// Skipped names the functions that refused, by reason.
	Skipped map[string][]string
	Elapsed time.Duration
	// Loading is the time attaching waited for programs to load (fentry:
	// one a function, the verifier's work), Linking the time the links
	// took (kprobes, trampolines).
	Loading, Linking time.Duration
	// Main and Rest, where the start is progressive, are the functions
	// attached first (the packet's main path) and those that attach
	// while tracing; Elapsed is then the first part's time, and Done
	// gets the whole.
	Main, Rest int
}

// SkippedTotal is the number of functions skipped for any reason.
func (a *AttachStats) SkippedTotal() int {
	n := 0
	for _, fns := range a.Skipped {
		n += len(fns)
	}
	return n
}

// count records a function attached: entry programs of skbret: are not
// probes of the script, and are counted apart.
func (a *AttachStats) count(p *codegen.Program) {
	if p.Helper == codegen.HelperEntry {
		a.Entries++
		return
	}
	// A merged program runs several probes on each function.
	a.Attached += p.Probes()
}

// byEntry orders entry programs first.
func byEntry(a, b *codegen.Program) int {
	ea, eb := a.Helper == codegen.HelperEntry, b.Helper == codegen.HelperEntry
	switch {
	case ea == eb:
		return 0
	case ea:
		return -1
	}
	return 1
}

// skip records a function that refused.
func (a *AttachStats) skip(fn string, err error) { a.skipWith(a.Backend, fn, err) }

// skipWith records a function that refused backend b.
func (a *AttachStats) skipWith(b Backend, fn string, err error) {
	r := skipReason(b, err)
	a.Skipped[r] = append(a.Skipped[r], fn)
}

// Summary is what to say on stderr about the skipped functions: a line
// with their count by reason, then a line per reason naming them.
func (a *AttachStats) Summary() []string {
	if len(a.Skipped) == 0 {
		return nil
	}
	reasons := slices.Sorted(maps.Keys(a.Skipped))
	var parts []string
	for _, r := range reasons {
		parts = append(parts, fmt.Sprintf("%d: %s", len(a.Skipped[r]), r))
	}
	lines := []string{fmt.Sprintf("%d functions skipped (%s)", a.SkippedTotal(), strings.Join(parts, "; "))}
	for _, r := range reasons {
		fns := slices.Sorted(slices.Values(a.Skipped[r]))
		lines = append(lines, fmt.Sprintf("  skipped, %s: %s", r, strings.Join(fns, " ")))
	}
	return lines
}

// progress draws "attaching N/M" (or another verb) on one terminal line,
// every step probes.
type progress struct {
	w           io.Writer
	done, total int
	verb        string
	// lines draws whole lines, every tenth of the way, instead of one
	// line redrawn: while tracing, event lines share the terminal.
	lines bool
	// start is when the first step was counted.
	start time.Time
}

const progressMin, progressStep = 300, 50

func (p *progress) add(n int) {
	if p.start.IsZero() {
		p.start = time.Now()
	}
	before := p.done
	p.done += n
	if p.lines {
		if p.w != nil && p.total >= progressMin && p.done*10/p.total != before*10/p.total && p.done < p.total {
			fmt.Fprintf(p.w, "skbtrace: %s %d/%d%s\n", p.verb0(), p.done, p.total, p.estimate())
		}
		return
	}
	if p.w != nil && p.total >= progressMin && (p.done/progressStep != before/progressStep || p.done == p.total) {
		fmt.Fprintf(p.w, "\rskbtrace: %s %d/%d%s\033[K", p.verb0(), p.done, p.total, p.estimate())
	}
}

// estimate is ", about N s left" at the pace so far, once there is one.
func (p *progress) estimate() string {
	if p.done < progressStep || p.done >= p.total {
		return ""
	}
	left := time.Since(p.start) * time.Duration(p.total-p.done) / time.Duration(p.done)
	return fmt.Sprintf(", about %v left", left.Round(time.Second))
}

// verb0 is the verb, "attaching" unless set.
func (p *progress) verb0() string {
	if p.verb == "" {
		return "attaching"
	}
	return p.verb
}

func (p *progress) end() {
	if p.w != nil && p.total >= progressMin && !p.lines {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// funcTargets lists, for a kprobe-form program, the functions with the
// skb and the drop reason where it reads them: for a Cookie program (one
// for every place), every function of its glob.
func funcTargets(p *codegen.Program, fa *FuncAttach) []string {
	var out []string
	for _, t := range multiTargets(p, fa) {
		out = append(out, t.fn)
	}
	return out
}

// multiTarget is a function a kprobe-form program attaches to, with the
// attach cookie that tells a Cookie program where the function's skb and
// drop reason are (codegen.AttachCookie; 0 for other programs).
type multiTarget struct {
	fn     string
	cookie uint64
}

// multiTargets is funcTargets with each function's cookie.
func multiTargets(p *codegen.Program, fa *FuncAttach) []multiTarget {
	reason := -1
	if p.HasReason {
		reason = p.ReasonArg
	}
	var out []multiTarget
	switch {
	case p.Helper == codegen.HelperEntry:
		for _, f := range fa.Entries {
			if f.SkbArg == p.SkbArg {
				out = append(out, multiTarget{fn: f.Name})
			}
		}
	case p.Return:
		for _, f := range fa.Ret[p.Attach.Glob] {
			if codegen.RetClass(f.Ret) == p.Ret {
				out = append(out, multiTarget{fn: f.Name})
			}
		}
	case p.Cookie:
		for _, f := range fa.Funcs[p.Attach.Glob] {
			if f.SkbArg <= codegen.MaxCookieArg && f.ReasonArg <= codegen.MaxCookieArg {
				out = append(out, multiTarget{fn: f.Name, cookie: codegen.AttachCookie(f.SkbArg, f.ReasonArg)})
			}
		}
	default:
		for _, f := range fa.Funcs[p.Attach.Glob] {
			if f.SkbArg == p.SkbArg && f.ReasonArg == reason {
				out = append(out, multiTarget{fn: f.Name})
			}
		}
	}
	return out
}

// attachFuncs attaches the skb: programs that trace functions. A function
// that refuses is skipped and counted; only if nothing attaches is it an
// error. The functions of a packet's main path (mainPath) attach first;
// with fa.Progressive the others then attach in the background while
// tracing (attachRest), else here.
func (s *Session) attachFuncs(fa *FuncAttach) (*AttachStats, error) {
	st := &AttachStats{Backend: fa.Backend, Skipped: map[string][]string{}}
	start := time.Now()
	pr := &progress{w: fa.Progress}
	var kprobes, fentries, globs []*codegen.Program
	for _, p := range s.out.Programs {
		switch {
		case (p.Helper != "" && p.Helper != codegen.HelperEntry) || p.Attach.Kind == 0:
		case p.Attach.Kind == codegen.AttachKprobes:
			globs = append(globs, p)
			pr.total += len(p.Attach.Funcs)
		case p.Function != "":
			fentries = append(fentries, p)
			pr.total++
		case p.Attach.Kind == codegen.AttachSkbFuncs:
			kprobes = append(kprobes, p)
			pr.total += len(funcTargets(p, fa))
		}
	}
	if len(kprobes)+len(fentries)+len(globs) == 0 {
		return nil, nil
	}
	// Entry programs first: a return finds the entry of each call that
	// started after it attached.
	slices.SortStableFunc(kprobes, byEntry)
	slices.SortStableFunc(fentries, byEntry)
	if st.Backend == "" && len(globs) > 0 {
		st.Backend = fa.Kprobe
	} else if st.Backend == "" {
		st.Backend = BackendFentry
	}
	// Earlier runs' detach helpers wait while this attaches (gate.go).
	release := holdAttachGate()
	for _, p := range globs {
		s.attachGlob(p, fa.Kprobe, st, pr)
	}
	for _, p := range kprobes {
		if !p.Attach.Multi {
			continue
		}
		now, later := lateMultiSplit(p, fa) // latemulti.go
		s.attachMulti(s.coll.Programs[p.Name], now, st, pr, p)
		if len(later) > 0 {
			s.lateMulti = append(s.lateMulti, lateLink{prog: p, targets: later})
		}
	}
	plan := s.funcSteps(fa, kprobes, fentries)
	first, rest := splitMain(plan)
	s.runSteps(first, st, &s.links, pr, nil)
	if fa.Progressive && len(rest) > 0 && st.Attached > 0 {
		pr.end()
		st.Elapsed = time.Since(start)
		st.Main, st.Rest = len(first), len(rest)
		s.attachRest(rest, st, pr, fa.Done, start, release)
		return st, nil
	}
	s.runSteps(rest, st, &s.links, pr, nil)
	release()
	pr.end()
	st.Elapsed = time.Since(start)
	if st.Attached == 0 {
		return st, fmt.Errorf("no function attached with %s: %s", fa.Backend, st.Summary())
	}
	return st, nil
}

// step attaches one function's program: a kprobe program (shared by the
// functions whose skb and reason are where its own are) or an fentry
// program of its own.
type step struct {
	fn   string
	prog *codegen.Program
	// cookie is the function's attach cookie, for a Cookie program.
	cookie uint64
	// fentry: the program is loaded for this function alone.
	fentry bool
}

// funcSteps lists the attaches of the kprobe and fentry programs, one a
// function, in the programs' order; kprobe-multi programs, which attach
// all their functions with one link, have none (attachFuncs).
func (s *Session) funcSteps(fa *FuncAttach, kprobes, fentries []*codegen.Program) []step {
	var out []step
	for _, p := range kprobes {
		if p.Attach.Multi {
			continue
		}
		for _, t := range multiTargets(p, fa) {
			out = append(out, step{fn: t.fn, prog: p, cookie: t.cookie})
		}
	}
	for _, p := range fentries {
		out = append(out, step{fn: p.Function, prog: p, fentry: true})
	}
	return out
}

// runSteps attaches each step's function, its links going to links;
// stop, when set and true, ends it early (the session is ending).
func (s *Session) runSteps(steps []step, st *AttachStats, links *[]link.Link, pr *progress, stop *atomic.Bool) {
	ld := s.loadAhead(steps, stop)
	i := 0
	for ; i < len(steps); i++ {
		sp := steps[i]
		if stop != nil && stop.Load() {
			break
		}
		if !sp.fentry {
			t := time.Now()
			l, err := attachKprobe(s.coll.Programs[sp.prog.Name], sp.fn, sp.prog.Return, sp.cookie)
			st.Linking += time.Since(t)
			if err != nil {
				st.skip(sp.fn, err)
			} else {
				*links = append(*links, l)
				st.count(sp.prog)
			}
			pr.add(1)
			continue
		}
		t := time.Now()
		r, ok := ld.take(i)
		st.Loading += time.Since(t)
		if !ok {
			i++
			break
		}
		err := r.err
		if err == nil {
			t = time.Now()
			err = s.linkFentry(sp.prog, r.prog, st, links)
			st.Linking += time.Since(t)
		}
		if err != nil && len(sp.prog.Merged) > 0 && verifierRefused(err) {
			// The verifier may refuse a merged program where it takes
			// each probe's own.
			err = nil
			for _, m := range sp.prog.Unmerge() {
				prog, merr := LoadShared(s.coll, m)
				if merr == nil {
					merr = s.linkFentry(m, prog, st, links)
				}
				if merr != nil {
					err = merr
				}
			}
		}
		if err != nil {
			st.skipWith(BackendFentry, sp.fn, err)
		}
		pr.add(1)
	}
	// Programs loaded ahead of a stop are closed unattached.
	ld.drain(i)
}

// linkFentry attaches a loaded fentry program of an skb: probe (or fexit of
// an skbret:), then closes the program's descriptor: the link holds it.
func (s *Session) linkFentry(p *codegen.Program, prog *ebpf.Program, st *AttachStats, links *[]link.Link) error {
	defer prog.Close()
	l, err := link.AttachTracing(link.TracingOptions{Program: prog, AttachType: p.Prog.AttachType})
	if err != nil {
		return err
	}
	*links = append(*links, l)
	st.count(p)
	return nil
}

// attachMulti attaches kprobe-multi links for many functions (their
// returns, for an skbret: program).
func (s *Session) attachMulti(prog *ebpf.Program, fns []multiTarget, st *AttachStats, pr *progress, p *codegen.Program) {
	s.attachMultiTo(prog, fns, st, pr, p, &s.links)
}

// attachMultiTo is attachMulti, its links going to links. A Cookie
// program's functions each get their cookie.
func (s *Session) attachMultiTo(prog *ebpf.Program, fns []multiTarget, st *AttachStats, pr *progress, p *codegen.Program, links *[]link.Link) {
	attach := link.KprobeMulti
	if p.Return {
		attach = link.KretprobeMulti
	}
	bisect(fns, func(part []multiTarget) error {
		opts := link.KprobeMultiOptions{Symbols: make([]string, len(part))}
		if p.Cookie {
			opts.Cookies = make([]uint64, len(part))
		}
		for i, t := range part {
			opts.Symbols[i] = t.fn
			if p.Cookie {
				opts.Cookies[i] = t.cookie
			}
		}
		l, err := attach(prog, opts)
		if err == nil {
			*links = append(*links, l)
			for range part {
				st.count(p)
			}
			pr.add(len(part))
		}
		return err
	}, func(t multiTarget, err error) {
		st.skip(t.fn, err)
		pr.add(1)
	})
}

// bisect tries fns as one set. The kernel refuses a whole kprobe-multi link
// if one function refuses, so a refused set is split in halves until the
// functions that refuse are found, and skipped, one by one.
func bisect[T any](fns []T, try func([]T) error, skip func(T, error)) {
	if len(fns) == 0 {
		return
	}
	err := try(fns)
	switch {
	case err == nil:
	case len(fns) == 1:
		skip(fns[0], err)
	default:
		bisect(fns[:len(fns)/2], try, skip)
		bisect(fns[len(fns)/2:], try, skip)
	}
}

// verifierRefusals are what the verifier says of a function fentry cannot
// trace, and how it is grouped.
var verifierRefusals = []struct {
	re  *regexp.Regexp
	say string
}{
	{regexp.MustCompile(`The function \S+ has \d+ (arguments)\. Too many`), "verifier: too many %s for a trampoline"},
	{regexp.MustCompile(`The function \S+ (with variable args) is unsupported`), "verifier: function %s"},
	{regexp.MustCompile(`The function \S+ return type (\w+) is unsupported`), "verifier: it returns a %s by value"},
	{regexp.MustCompile(`The function \S+ arg\d+ type (\w+) is unsupported`), "verifier: it takes a %s by value"},
}

// errENOTSUPP is the kernel's internal ENOTSUPP, which the bpf syscall
// returns where it cannot build a trampoline.
const errENOTSUPP = unix.Errno(524)

// skipReason says why a function refused, without its name, so that
// refusals group by cause; the causes known are said in words.
func skipReason(b Backend, err error) string {
	switch {
	case b == BackendKprobe && errors.Is(err, unix.EADDRNOTAVAIL):
		return "several functions share the name (static functions), which a kprobe cannot tell apart"
	case b == BackendFentry && (errors.Is(err, errENOTSUPP) || errors.Is(err, ebpf.ErrNotSupported)):
		return "the kernel cannot build an fentry trampoline for it (too many arguments, or a struct passed by value, for this kernel)"
	case errors.Is(err, unix.EBUSY):
		return "another tracer holds it"
	}
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		// The verifier's refusals of fentry targets name the function:
		// group them by what it said of it.
		for _, l := range ve.Log {
			for _, r := range verifierRefusals {
				if m := r.re.FindStringSubmatch(l); m != nil {
					return fmt.Sprintf(r.say, m[1])
				}
			}
		}
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// retClasses are the return classes of the functions skbret: probes
// attach to, by name: a retval whose functions return different types
// (types.FmtRet) is printed as its own function returns it.
func retClasses(fa *FuncAttach) map[string]codegen.RetClass {
	if fa == nil || len(fa.Ret) == 0 {
		return nil
	}
	out := map[string]codegen.RetClass{}
	for _, fns := range fa.Ret {
		for _, f := range fns {
			out[f.Name] = codegen.RetClass(f.Ret)
		}
	}
	return out
}
