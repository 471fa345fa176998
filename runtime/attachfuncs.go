package runtime

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// FuncAttach says where skb: programs attach when a function backend is in
// use.
type FuncAttach struct {
	Backend Backend
	// Funcs, by skb: glob, are the functions that glob matched.
	Funcs map[string][]SkbFunc
	// Progress, when set, gets a progress line while many probes attach
	// (the CLI sets it when stderr is a terminal).
	Progress io.Writer
}

// AttachStats is what attaching skb: probes to functions came to.
type AttachStats struct {
	Backend  Backend
	Attached int
	// Skipped counts the functions that refused, by reason.
	Skipped map[string]int
	Elapsed time.Duration
}

// SkippedTotal is the number of functions skipped for any reason.
func (a *AttachStats) SkippedTotal() int {
	n := 0
	for _, c := range a.Skipped {
		n += c
	}
	return n
}

// Summary is one line for stderr: the skipped functions, grouped by reason.
func (a *AttachStats) Summary() string {
	if len(a.Skipped) == 0 {
		return ""
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(a.Skipped)) {
		parts = append(parts, fmt.Sprintf("%d: %s", a.Skipped[r], r))
	}
	return fmt.Sprintf("%d functions skipped (%s)", a.SkippedTotal(), strings.Join(parts, "; "))
}

// progress draws "attaching N/M" on one terminal line, every step probes.
type progress struct {
	w           io.Writer
	done, total int
}

const progressMin, progressStep = 300, 50

func (p *progress) add(n int) {
	before := p.done
	p.done += n
	if p.w != nil && p.total >= progressMin && (p.done/progressStep != before/progressStep || p.done == p.total) {
		fmt.Fprintf(p.w, "\rskbtrace: attaching %d/%d", p.done, p.total)
	}
}

func (p *progress) end() {
	if p.w != nil && p.total >= progressMin {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// funcTargets lists, for a kprobe-form program, the functions with the
// skb where it reads it.
func funcTargets(p *codegen.Program, fa *FuncAttach) []string {
	var out []string
	for _, f := range fa.Funcs[p.Spec.Spec.Target] {
		if f.SkbArg == p.SkbArg {
			out = append(out, f.Name)
		}
	}
	return out
}

// attachFuncs attaches the skb: programs that trace functions. A function
// that refuses is skipped and counted; only if nothing attaches is it an
// error.
func (s *Session) attachFuncs(fa *FuncAttach) (*AttachStats, error) {
	st := &AttachStats{Backend: fa.Backend, Skipped: map[string]int{}}
	start := time.Now()
	pr := &progress{w: fa.Progress}
	var kprobes []*codegen.Program
	var fentries []*codegen.Program
	for _, p := range s.out.Programs {
		switch {
		case p.Helper != "" || p.Spec == nil:
		case p.Function != "":
			fentries = append(fentries, p)
			pr.total++
		case p.KprobeForm():
			kprobes = append(kprobes, p)
			pr.total += len(funcTargets(p, fa))
		}
	}
	if len(kprobes)+len(fentries) == 0 {
		return nil, nil
	}
	skip := func(err error) { st.Skipped[shortReason(err)]++ }
	for _, p := range kprobes {
		prog := s.coll.Programs[p.Name]
		fns := funcTargets(p, fa)
		if fa.Backend == BackendKprobeMulti {
			s.attachMulti(prog, fns, st, pr)
			continue
		}
		for _, fn := range fns {
			l, err := attachOne(BackendKprobe, prog, []string{fn})
			if err != nil {
				skip(err)
			} else {
				s.links = append(s.links, l)
				st.Attached++
			}
			pr.add(1)
		}
	}
	for _, p := range fentries {
		prog, err := LoadShared(s.coll, p)
		if err == nil {
			var l link.Link
			l, err = attachOne(BackendFentry, prog, nil)
			prog.Close()
			if err == nil {
				s.links = append(s.links, l)
				st.Attached++
			}
		}
		if err != nil {
			skip(err)
		}
		pr.add(1)
	}
	pr.end()
	st.Elapsed = time.Since(start)
	if st.Attached == 0 {
		return st, fmt.Errorf("no function attached with %s: %s", fa.Backend, st.Summary())
	}
	return st, nil
}

// attachMulti attaches kprobe-multi links for many functions.
func (s *Session) attachMulti(prog *ebpf.Program, fns []string, st *AttachStats, pr *progress) {
	bisect(fns, func(part []string) error {
		l, err := attachOne(BackendKprobeMulti, prog, part)
		if err == nil {
			s.links = append(s.links, l)
			st.Attached += len(part)
			pr.add(len(part))
		}
		return err
	}, func(err error) {
		st.Skipped[shortReason(err)]++
		pr.add(1)
	})
}

// bisect tries fns as one set. The kernel refuses a whole kprobe-multi link
// if one function refuses, so a refused set is split in halves until the
// functions that refuse are found, and skipped, one by one.
func bisect(fns []string, try func([]string) error, skip func(error)) {
	if len(fns) == 0 {
		return
	}
	err := try(fns)
	switch {
	case err == nil:
	case len(fns) == 1:
		skip(err)
	default:
		bisect(fns[:len(fns)/2], try, skip)
		bisect(fns[len(fns)/2:], try, skip)
	}
}

// shortReason is an attach error without the function's name, so that
// refusals group by cause.
func shortReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}
