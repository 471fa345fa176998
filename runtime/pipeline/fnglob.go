package pipeline

import (
	"fmt"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// globBackend decides how the globs of function probes (kprobe:tcp_*,
// fexit:ip_*) attach, with the machinery of skb: probes: kprobe and
// kretprobe globs with kprobe-multi where the kernel has it (or --backend
// says so), else a kprobe per function; fentry and fexit globs with a
// program per function. It returns the skb: attachment, made where there
// was none.
func globBackend(cfg Config, info *check.Info, fa *session.FuncAttach) (*session.FuncAttach, error) {
	var kprobe, fentry *check.SpecInfo
	for _, pi := range info.Probes {
		for _, si := range pi.Specs {
			if len(si.Funcs) == 0 {
				continue
			}
			switch si.Spec.Kind {
			case lang.ProbeKprobe, lang.ProbeKretprobe:
				kprobe = si
			case lang.ProbeFentry, lang.ProbeFexit:
				fentry = si
			}
		}
	}
	if kprobe == nil && fentry == nil {
		return fa, nil
	}
	if fa == nil {
		fa = &session.FuncAttach{}
	}
	if fentry != nil {
		if err := probeSome(session.BackendFentry, fentry); err != nil {
			return nil, fmt.Errorf("%s: %w", fentry.Spec.Text, err)
		}
	}
	if kprobe == nil {
		return fa, nil
	}
	switch session.Backend(cfg.Backend) {
	case session.BackendKprobeMulti, session.BackendKprobe:
		fa.Kprobe = session.Backend(cfg.Backend)
		if err := probeSome(fa.Kprobe, kprobe); err != nil {
			return nil, fmt.Errorf("%s: --backend %s: %w", kprobe.Spec.Text, cfg.Backend, err)
		}
		return fa, nil
	}
	fa.Kprobe = session.BackendKprobeMulti
	if probeSome(fa.Kprobe, kprobe) != nil {
		fa.Kprobe = session.BackendKprobe
		if err := probeSome(fa.Kprobe, kprobe); err != nil {
			return nil, fmt.Errorf("%s: %w", kprobe.Spec.Text, err)
		}
	}
	return fa, nil
}

// probeSome checks that backend b works on this kernel with one of the
// first functions a glob matches: one function may refuse on its own (too
// many arguments for a trampoline), which is that function's skip, not the
// backend's failure.
func probeSome(b session.Backend, si *check.SpecInfo) error {
	var first error
	for i, f := range si.Funcs {
		if i == 5 {
			break
		}
		err := session.ProbeBackend(b, f.Func)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}
