package compiletest

import (
	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// KernelOptions are the checker's options for this kernel as skbtrace
// gives them (pipeline.CheckOptions: tracefs's formats and tracepoints,
// the functions that can be traced) with spec's types, for the tests of
// the packages the pipeline imports, which cannot import it. Loaded BPF
// programs are left out: a test that wants bpf: probes asks the pipeline.
func KernelOptions(spec check.BTF) check.Options {
	return check.Options{BTF: spec, TracepointFormat: kernel.TracepointFormat(nil), TracepointExists: kernel.TracepointExists,
		MatchFuncs: kernel.TraceableFuncs, MatchTracepoints: kernel.MatchTracepoints}
}
