package codegen

import (
	"fmt"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// compileGlob generates the programs of a function probe's glob
// (kprobe:tcp_*, fexit:ip_*). fentry and fexit take a program per
// function, each typed by its own prototype. kprobes take one program per
// shape: the functions whose skb and drop reason sit at the same argument
// positions and, on a return probe, that return the same type, share it,
// and the runtime attaches it to all of them at once where the kernel has
// kprobe-multi.
func compileGlob(s *lang.Script, info *check.Info, ms *mapSet, out *Output, p *lang.Probe, spec *check.SpecInfo, name string, ksym func(string) uint64) ([]*Program, error) {
	var progs []*Program
	switch spec.Spec.Kind {
	case lang.ProbeUprobe, lang.ProbeUretprobe:
		return compileUserGlob(s, info, ms, out, p, spec, name, ksym)
	case lang.ProbeFentry, lang.ProbeFexit:
		for i, f := range spec.Funcs {
			tg := SkbTarget{Name: f.Func, Fentry: true, SkbArg: -1}
			prog, err := compileProbe(info, ms, out, p, f, fmt.Sprintf("%s_fn%d", name, i), tg, ksym)
			if err != nil {
				return nil, positioned(s, spec, err)
			}
			progs = append(progs, prog)
		}
		return progs, nil
	}
	type shape struct {
		skb, reason int
		ret         string
		// fn splits a kretprobe glob into a program per function where
		// the kernel lacks bpf_get_func_ip: at a return nothing else
		// says which function it was.
		fn string
	}
	var order []shape
	groups := map[shape][]*check.SpecInfo{}
	for _, f := range spec.Funcs {
		k := shape{skb: -1, reason: -1}
		if f.SkbParam >= 0 {
			k.skb = f.Params[f.SkbParam].Index
		}
		if f.ReasonParam >= 0 {
			k.reason = f.Params[f.ReasonParam].Index
		}
		if spec.Spec.Kind == lang.ProbeKretprobe {
			k.ret = f.Ret.String()
			if f.RetVoid {
				k.ret = "void"
			}
			if ms.noFuncIP() {
				k.fn = f.Func
			}
		}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	for i, k := range order {
		fs := groups[k]
		tg := SkbTarget{SkbArg: -1, fn: k.fn, shared: k.fn == ""}
		prog, err := compileProbe(info, ms, out, p, fs[0], fmt.Sprintf("%s_g%d", name, i), tg, ksym)
		if err != nil {
			return nil, positioned(s, spec, err)
		}
		prog.Prog.AttachTo = ""
		for _, f := range fs {
			prog.Functions = append(prog.Functions, f.Func)
		}
		prog.Attach = Attach{Kind: AttachKprobes, Text: spec.Spec.Text, ProbeKind: string(spec.Spec.Kind), Funcs: prog.Functions,
			Return: spec.Spec.Kind == lang.ProbeKretprobe}
		progs = append(progs, prog)
	}
	return progs, nil
}
