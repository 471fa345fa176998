package codegen

import (
	"fmt"
	"maps"
	"slices"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// lateBPF compiles the programs of bpf: and bpfret: specs for BPF programs
// loaded while tracing. It works on copies of what the script's compile
// made (its maps' specs, events and probe names), which the new programs'
// events and names continue, so that the session's Output is not written
// while it is read.
type lateBPF struct {
	script *lang.Script
	info   *check.Info
	ms     mapSet
	out    Output
	ksym   func(string) uint64
	// n counts the programs compiled, for their names.
	n int
}

// newLateBPF is the compiler of late programs of a compiled script; nil
// where no spec waits for programs (check's SpecInfo.LateType).
func newLateBPF(s *lang.Script, info *check.Info, ms *mapSet, out *Output, ksym func(string) uint64) *lateBPF {
	waits := false
	for _, p := range s.Probes {
		for _, si := range info.Probes[p].Specs {
			waits = waits || si.LateType != ""
		}
	}
	if !waits {
		return nil
	}
	l := &lateBPF{script: s, info: info, ms: *ms, ksym: ksym}
	l.out = Output{Maps: maps.Clone(out.Maps), Events: slices.Clone(out.Events), ProbeNames: slices.Clone(out.ProbeNames)}
	l.ms.specs = l.out.Maps
	return l
}

// SkipsRefusedBPF reports whether a bpf: program that the kernel will not
// let trace its target is skipped (missing_probes = warn or ignore), not
// an error.
func (o *Output) SkipsRefusedBPF() bool { return o.lenientBPF }

// WaitsForBPF reports whether a bpf: or bpfret: spec of the script takes
// programs loaded while tracing: the runtime then watches for them.
func (o *Output) WaitsForBPF() bool { return o.late != nil }

// Late is what CompileLate made for a program loaded while tracing.
type Late struct {
	// Programs are the tracing programs, one per spec that takes it, each
	// with its BPF target.
	Programs []*Program
	// Events are their records' events, whose ids follow the script's
	// and earlier Late's; ProbeNames the names probe's values index, all
	// of them (the script's first).
	Events     []*Event
	ProbeNames []string
}

// CompileLate compiles, for a program loaded since the script was
// compiled (its id, name, type and BTF function, as check.BPFProg), the
// programs of each bpf: and bpfret: spec that takes it
// (check.LateSpec): none where none does. The programs use only maps the
// script has: one that would need another is an error. Not safe for
// concurrent use.
func (o *Output) CompileLate(id uint32, name, typ, fn string) (*Late, error) {
	prog := check.BPFProg{ID: id, Name: name, Type: typ, Func: fn}
	l := o.late
	if l == nil {
		return &Late{}, nil
	}
	firstEvent := len(l.out.Events)
	res := &Late{}
	for pi, p := range l.script.Probes {
		for si, spec := range l.info.Probes[p].Specs {
			psi := check.LateSpec(spec, &prog)
			if psi == nil {
				continue
			}
			name := fmt.Sprintf("p%d_%d_late%d", pi, si, l.n)
			l.n++
			cp, err := compileProbe(l.info, &l.ms, &l.out, p, psi, name, SkbTarget{SkbArg: -1, bpf: &prog}, l.ksym)
			if err != nil {
				return nil, positioned(l.script, spec, err)
			}
			res.Programs = append(res.Programs, cp)
		}
	}
	for name := range l.out.Maps {
		if o.Maps[name] == nil {
			return nil, fmt.Errorf("the probe would need map %s, which the script's programs did not", name)
		}
	}
	res.Events = slices.Clone(l.out.Events[firstEvent:])
	res.ProbeNames = slices.Clone(l.out.ProbeNames)
	return res, nil
}
