package lang

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// probeAliases maps bpftrace's short probe names to ours.
var probeAliases = map[string]ProbeKind{
	"skb": ProbeSkb, "skbret": ProbeSkbRet, "kprobe": ProbeKprobe, "k": ProbeKprobe,
	"kretprobe": ProbeKretprobe, "kr": ProbeKretprobe,
	"fentry": ProbeFentry, "f": ProbeFentry, "fexit": ProbeFexit, "fr": ProbeFexit,
	"tracepoint": ProbeTracepoint, "t": ProbeTracepoint,
	"interval": ProbeInterval, "i": ProbeInterval,
	"profile": ProbeProfile, "p": ProbeProfile,
	"uprobe": ProbeUprobe, "u": ProbeUprobe, "uretprobe": ProbeUretprobe, "ur": ProbeUretprobe,
	// bpftrace's older names of fentry and fexit.
	"kfunc": ProbeFentry, "kretfunc": ProbeFexit,
	"bpf": ProbeBpf, "bpfret": ProbeBpfRet,
	"self": ProbeSelf,
	"test": ProbeTest, "bench": ProbeBench,
	// rawtracepoint:[MODULE:]NAME is a tracepoint read by its raw
	// arguments (rawtracepoint.go).
	"rawtracepoint": ProbeTracepoint, "rt": ProbeTracepoint,
}

// SelfSignals are the signals self:signal probes run on.
var SelfSignals = map[string]bool{"SIGUSR1": true, "SIGUSR2": true}

// outOfScope are bpftrace's probe kinds skbtrace does not have, and why.
var outOfScope = map[string]string{
	"usdt":            "USDT probes are out of scope: skbtrace follows packets through the kernel; use bpftrace for user space",
	"software":        "perf software events are out of scope: skbtrace attaches to packet events",
	"hardware":        "perf hardware events are out of scope: skbtrace attaches to packet events",
	"watchpoint":      "watchpoints are out of scope: skbtrace attaches to packet events",
	"asyncwatchpoint": "watchpoints are out of scope: skbtrace attaches to packet events",
	"iter":            "BPF iterators are out of scope: skbtrace attaches to packet events",
}

// outOfScopeAliases are the short names of outOfScope's kinds.
var outOfScopeAliases = map[string]string{
	"U": "usdt",
	"s": "software", "h": "hardware", "w": "watchpoint", "aw": "asyncwatchpoint",
}

// ProbeKindNames lists the probe kinds, for hints.
var ProbeKindNames = []string{"skb", "skbret", "kprobe", "kretprobe", "fentry", "fexit", "tracepoint", "rawtracepoint", "interval", "profile", "uprobe", "uretprobe", "bpf", "bpfret", "self", "test", "bench", "begin", "end", "BEGIN", "END"}

func (l *lowerer) spec(g *gSpec) *ProbeSpec {
	if name, rest, ok := strings.Cut(g.Text, "="); ok && isProbeName(name) && rest != "" {
		// bpftrace 0.25's probe name, `name=kprobe:f` (reserved for
		// future use there): the probe is what follows it.
		cp := *g
		cp.Text = rest
		cp.Pos.Offset += len(name) + 1
		cp.Pos.Column += len(name) + 1
		g = &cp
	}
	sp := l.span(g.Pos, g.EndPos)
	s := &ProbeSpec{At: sp, Text: g.Text}
	switch g.Text {
	case "BEGIN", "END":
		s.Kind = ProbeKind(g.Text)
		return s
	case "begin", "end":
		// bpftrace 0.26 writes them in lowercase; the kind is the same,
		// the text (what probe prints) as written.
		s.Kind = ProbeKind(strings.ToUpper(g.Text))
		return s
	}
	text, ok := l.probeParams(sp, g.Text)
	if !ok {
		return s
	}
	s.Text = text
	switch text {
	case "BEGIN", "END", "begin", "end":
		// Built of parameters: BEG$1 with IN.
		s.Kind = ProbeKind(strings.ToUpper(text))
		return s
	}
	kind, rest, found := strings.Cut(text, ":")
	k, ok := probeAliases[kind]
	full := kind
	if a, ok := outOfScopeAliases[kind]; ok {
		full = a
	}
	if why, ok := outOfScope[full]; ok && found {
		l.diags.Add(sp, why, "%s probes are not supported", full)
		return s
	}
	if !ok {
		hint := "probes are " + strings.Join(ProbeKindNames, ", ")
		if m := Suggest(kind, ProbeKindNames); m != "" {
			hint = "did you mean " + m + "?"
		}
		if !found {
			hint = "a probe is KIND:TARGET, e.g. skb:ip_rcv or tracepoint:skb:kfree_skb"
		}
		l.diags.Add(sp, hint, "unknown probe %q", text)
		return s
	}
	s.Kind, s.Target = k, rest
	switch k {
	case ProbeTracepoint:
		if kind == "rawtracepoint" || kind == "rt" {
			l.rawTracepoint(sp, s, rest)
			break
		}
		cat, name, ok := strings.Cut(rest, ":")
		// A category of * stands for any: tracepoints attach by name. Globs
		// elsewhere (tracepoint:sched:sched*, tracepoint:net:*) attach to
		// every tracepoint they match, which the checker lists.
		if !ok || cat == "" || name == "" || !isGlob(cat) || !isGlob(name) {
			l.diags.Add(sp, "write tracepoint:CATEGORY:NAME, e.g. tracepoint:skb:kfree_skb", "invalid tracepoint %q", text)
		}
		s.Category, s.Name = cat, name
	case ProbeInterval:
		s.Period = l.interval(sp, "interval", rest)
	case ProbeTest, ProbeBench:
		l.testSpec(sp, s, rest)
	case ProbeSelf:
		sig, ok := strings.CutPrefix(rest, "signal:")
		if !ok || !SelfSignals[sig] {
			l.diags.Add(sp, "write self:signal:SIGUSR1 (or SIGUSR2)", "invalid self probe %q", text)
		}
		s.Name = sig
	case ProbeProfile:
		if n, ok := strings.CutPrefix(rest, "hz:"); ok {
			if hz, err := strconv.ParseUint(n, 10, 64); err == nil && hz > 0 && hz <= maxProfileHz {
				s.Hz = hz
				break
			}
			l.diags.Add(sp, fmt.Sprintf("write profile:hz:N with N from 1 to %d, e.g. profile:hz:99", maxProfileHz), "invalid profile rate %q", text)
			break
		}
		s.Period = l.interval(sp, "profile", rest)
	case ProbeFentry, ProbeFexit:
		if prog, ok := strings.CutPrefix(rest, "bpf:"); ok {
			// bpftrace's fentry:bpf:PROG and fexit:bpf:PROG.
			s.Kind = ProbeBpf
			if k == ProbeFexit {
				s.Kind = ProbeBpfRet
			}
			l.bpfProgSpec(sp, s, "*:"+prog)
			break
		}
		fallthrough
	case ProbeKprobe, ProbeKretprobe:
		if mod, fn, ok := strings.Cut(rest, ":"); ok && isIdent(mod) {
			// kprobe:MODULE:FN, fentry:vmlinux:vfs_read as -l lists it:
			// the function, wherever it is (kernel functions' names are
			// one namespace: BTF and kallsyms name each once).
			rest, s.Target = fn, fn
		}
		if strings.Contains(rest, "+") {
			rest = l.kprobeOffset(sp, s, k, rest)
			s.Target = rest
		}
		// A glob (kprobe:tcp_*) attaches to every traceable function it
		// matches, as skb: does.
		if rest == "" || !isIdent(rest) && !(strings.ContainsAny(rest, "*?[") && isGlob(rest)) {
			l.diags.Add(sp, "name a kernel function or a glob of them, e.g. "+string(k)+":tcp_v4_rcv or "+string(k)+":tcp_*", "%s needs a function name, got %q", k, rest)
		}
	case ProbeUprobe, ProbeUretprobe:
		l.uprobeSpec(sp, s, rest)
	case ProbeBpf, ProbeBpfRet:
		l.bpfProgSpec(sp, s, rest)
	case ProbeSkb, ProbeSkbRet:
		if rest == "" {
			l.diags.Add(sp, string(k)+":* traces every function that takes a struct sk_buff *", "%s probe needs a function pattern", k)
		} else if !isGlob(rest) {
			l.diags.Add(sp, "patterns use letters, digits, _, and the glob characters * ? [ ]", "invalid function pattern %q", rest)
		}
	}
	return s
}

// probeParams puts the positional parameters a probe names ($1, $2...) in
// its text, as bpftrace does: `interval:s:$1` run with 5 is interval:s:5.
func (l *lowerer) probeParams(sp Span, text string) (string, bool) {
	if !strings.Contains(text, "$") {
		return text, true
	}
	ok := true
	out := positionalRef.ReplaceAllStringFunc(text, func(ref string) string {
		n, _ := strconv.Atoi(ref[1:])
		if n == 0 || n > len(l.src.Params) {
			if ok {
				l.diags.Add(sp, fmt.Sprintf("give the script's arguments after it (%d given)", len(l.src.Params)), "%s in probe %q is not given", ref, text)
			}
			ok = false
			return ref
		}
		return l.src.Params[n-1]
	})
	return out, ok
}

// maxProfileHz is the highest profile rate: the kernel's
// perf_event_max_sample_rate default.
const maxProfileHz = 100000

var positionalRef = regexp.MustCompile(`\$[0-9]+`)

// interval parses UNIT:N (s, ms, us, hz) or bpftrace's Ns / Nms / N (in
// nanoseconds) into nanoseconds.
func (l *lowerer) interval(sp Span, kind, rest string) uint64 {
	unit, num, ok := strings.Cut(rest, ":")
	if !ok {
		i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		switch {
		case i > 0:
			num, unit = rest[:i], rest[i:]
		case i < 0:
			// bpftrace's interval:COUNT is in nanoseconds.
			num, unit = rest, "ns"
		}
	}
	mult := map[string]uint64{"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1, "hz": 0}
	m, known := mult[unit]
	n, err := strconv.ParseUint(num, 10, 64)
	if !known || err != nil || n == 0 {
		k := kind
		l.diags.Add(sp, "write "+k+":s:N, "+k+":ms:N, "+k+":us:N, "+k+":hz:N or "+k+":Ns with N > 0", "invalid %s %q", kind, kind+":"+rest)
		return 0
	}
	if unit == "hz" {
		return 1e9 / n
	}
	// The runtime runs intervals from a timer; profile's perf events
	// take any period.
	if m*n < 1e6 && kind == "interval" {
		l.diags.Add(sp, "the shortest "+kind+" is 1ms", "%s %q is too short", kind, kind+":"+rest)
	}
	return m * n
}

func isIdent(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' || i > 0 && c == '.') {
			return false
		}
	}
	return s != ""
}

func isGlob(s string) bool {
	for _, c := range s {
		if !(c == '_' || c == '*' || c == '?' || c == '[' || c == ']' || c == '.' || c == '-' || c == '!' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isProbeName reports whether s is an identifier, as a probe's name is.
func isProbeName(s string) bool {
	for i, c := range s {
		if c != '_' && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && (i == 0 || !('0' <= c && c <= '9')) {
			return false
		}
	}
	return s != ""
}
