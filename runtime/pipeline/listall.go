package pipeline

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
)

// listPatterns lists a -l argument as bpftrace 0.26 does: patterns
// separated by commas, each listed in turn; * alone (or no pattern) every
// probe of every kind. It fails where no pattern matched anything.
func (l *lister) listPatterns(arg string) error {
	var errs []error
	matched := false
	for _, pattern := range strings.Split(arg, ",") {
		pattern = strings.TrimSpace(pattern)
		var err error
		switch {
		case pattern == "*" || pattern == "":
			err = l.listAll()
		case !strings.Contains(pattern, ":") && strings.ContainsAny(pattern, "*?[") && !strings.HasPrefix(pattern, "struct ") && !strings.HasPrefix(pattern, "union "):
			err = l.listAnyKind(pattern)
		default:
			err = l.list(pattern)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		matched = true
	}
	if matched {
		return nil
	}
	return errors.Join(errs...)
}

// listAll lists every probe of every kind this kernel has: skbtrace's
// skb: functions, then kprobes, fentry functions and tracepoints, as
// bpftrace's bare -l lists every kind it has.
func (l *lister) listAll() error {
	// skb:'s listing names the tracepoints that carry an sk_buff, which
	// tracepoint:*:* lists again: each line once.
	seen, emit := map[string]bool{}, l.emit
	l.emit = func(line string) {
		if !seen[line] {
			seen[line] = true
			emit(line)
		}
	}
	defer func() { l.emit = emit }()
	var errs []error
	for _, pattern := range []string{"skb:*", "kprobe:*", "fentry:*", "tracepoint:*:*"} {
		if err := l.list(pattern); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 4 {
		return errors.Join(errs...)
	}
	return nil
}

// listAnyKind lists the probes of every kind whose whole name a pattern
// without a kind matches, as bpftrace's -l '*sleep*' does
// (tracepoint:sched:sched_switch for *sched_switch*); an skb: function
// is matched by its bare name too (ip_*), as skbtrace's -l always did.
func (l *lister) listAnyKind(pattern string) error {
	emit := l.emit
	defer func() { l.emit = emit }()
	n, keep := 0, false
	l.emit = func(line string) {
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			// -lv's lines under a probe go with it.
			if keep {
				emit(line)
			}
			return
		}
		probe, _, _ := strings.Cut(line, " ")
		whole, _ := path.Match(pattern, probe)
		bare := false
		if name, ok := strings.CutPrefix(probe, "skb:"); ok {
			bare, _ = path.Match(pattern, name)
		}
		keep = whole || bare
		if keep {
			n++
			emit(line)
		}
	}
	if err := l.listAll(); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("no probe matches %q", pattern)
	}
	return nil
}

// fixedProbes are the probes no kernel lists, whose names -l gives as
// bpftrace does: interval:ms: and the like take their period after them.
var fixedProbes = []string{"begin", "end",
	"interval:hz:", "interval:ms:", "interval:s:", "interval:us:",
	"profile:hz:", "profile:ms:", "profile:s:", "profile:us:"}

// listFixed lists the fixed probes a pattern of their kind matches
// (interval:*, i:ms*, begin); ok is false for a pattern of another kind.
func (l *lister) listFixed(pattern string) (n int, ok bool) {
	kind, rest, _ := strings.Cut(pattern, ":")
	switch kind {
	case "i":
		kind = "interval"
	case "p":
		kind = "profile"
	case "BEGIN", "END":
		kind = strings.ToLower(kind)
	}
	if kind != "interval" && kind != "profile" && kind != "begin" && kind != "end" {
		return 0, false
	}
	full := kind
	if rest != "" || strings.Contains(pattern, ":") {
		full += ":" + rest
	}
	for _, p := range fixedProbes {
		// interval:ms: matches interval:*, interval:ms:* and interval:ms:100.
		if m, _ := path.Match(full, p); m || strings.HasPrefix(full, p) && p != "begin" && p != "end" {
			l.printf("%s", p)
			n++
		}
	}
	return n, true
}

// ListScript lists the probes of a script file as bpftrace's -l FILE
// does: each probe of it, a glob listed as the probes it matches.
func ListScript(cfg Config, src *lang.Source, emit func(line string)) error {
	s, err := lang.Parse(src)
	if err != nil {
		return err
	}
	l := &lister{Config: cfg, emit: emit}
	var errs []error
	for _, p := range s.Probes {
		for _, sp := range p.Specs {
			name := passes.FullName(sp)
			switch sp.Kind {
			case lang.ProbeBegin, lang.ProbeEnd, lang.ProbeInterval, lang.ProbeProfile, lang.ProbeUprobe, lang.ProbeUretprobe:
				emit(name)
				continue
			}
			if !strings.ContainsAny(name, "*?[") {
				emit(name)
				continue
			}
			if err := l.list(name); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
	}
	return errors.Join(errs...)
}
