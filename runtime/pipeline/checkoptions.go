package pipeline

import (
	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// CheckOptions are the checker's options for this kernel: the types of
// spec, the positional parameters, tracefs for classic tracepoints (warn
// hears what it could not read), the functions that can be traced, and
// the loaded BPF packet programs.
func CheckOptions(spec check.BTF, params []string, warn func(string)) check.Options {
	return check.Options{BTF: spec, Params: params, TracepointFormat: kernel.TracepointFormat(warn), TracepointExists: kernel.TracepointExists,
		MatchFuncs: kernel.TraceableFuncs, MatchTracepoints: kernel.MatchTracepoints, BPFProgs: bpfProgs,
		KfuncAllowed: kernel.KfuncAllowed}
}

// bpfProgs lists the loaded packet programs for the checker.
func bpfProgs() ([]check.BPFProg, error) {
	ps, err := kernel.PacketProgs()
	out := make([]check.BPFProg, len(ps))
	for i, p := range ps {
		out[i] = check.BPFProg{ID: p.ID, Name: p.Name, Type: p.Type, Func: p.Func}
	}
	return out, err
}
