package main

import (
	"fmt"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime"
)

// globBackend decides how the globs of function probes (kprobe:tcp_*,
// fexit:ip_*) attach, with the machinery of skb: probes: kprobe and
// kretprobe globs with kprobe-multi where the kernel has it (or --backend
// says so), else a kprobe per function; fentry and fexit globs with a
// program per function. It returns the skb: attachment, made where there
// was none.
func globBackend(o options, info *check.Info, fa *runtime.FuncAttach) (*runtime.FuncAttach, error) {
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
		fa = &runtime.FuncAttach{}
	}
	if fentry != nil {
		if err := runtime.ProbeBackend(runtime.BackendFentry, fentry.Funcs[0].Func); err != nil {
			return nil, fmt.Errorf("%s: %w", fentry.Spec.Text, err)
		}
	}
	if kprobe == nil {
		return fa, nil
	}
	fn := kprobe.Funcs[0].Func
	switch runtime.Backend(o.backend) {
	case runtime.BackendKprobeMulti, runtime.BackendKprobe:
		fa.Kprobe = runtime.Backend(o.backend)
		if err := runtime.ProbeBackend(fa.Kprobe, fn); err != nil {
			return nil, fmt.Errorf("%s: --backend %s: %w", kprobe.Spec.Text, o.backend, err)
		}
		return fa, nil
	}
	fa.Kprobe = runtime.BackendKprobeMulti
	if runtime.ProbeBackend(fa.Kprobe, fn) != nil {
		fa.Kprobe = runtime.BackendKprobe
		if err := runtime.ProbeBackend(fa.Kprobe, fn); err != nil {
			return nil, fmt.Errorf("%s: %w", kprobe.Spec.Text, err)
		}
	}
	return fa, nil
}
