package stdlib

import "github.com/skbtrace/skbtrace/lang/types"

// kfuncAllowedFn is bpftrace's kfunc_allowed("name"): whether this
// probe's programs may call the kernel function (a kfunc), which the
// checker asks the kernel (check/kfuncallowed.go).
var kfuncAllowedFn = &Func{Name: "kfunc_allowed", Sig: `kfunc_allowed("name")`, Doc: "whether this probe's BPF programs may call the kfunc of that name (the kernel lets each program type call its own set), known when the script is compiled", Infer: func(c Call) types.Type {
	if arity(c, `kfunc_allowed("name")`, 1, 1) {
		if _, ok := c.ConstStr(0); !ok && c.Arg(0).Kind != types.Invalid {
			c.Errorf(0, `e.g. kfunc_allowed("bpf_task_from_pid")`, "kfunc_allowed() accepts a string literal only")
		}
	}
	return types.Bool
}}

// CommPidLen is the size of comm(pid)'s string: a task's comm.
const CommPidLen = 16

// commOfPid is bpftrace 0.25's comm(pid): the name of the process pid,
// read from its task with the bpf_task_from_pid kfunc, "N/A" where there
// is none (codegen/commpid.go); comm alone is the current task's.
var commOfPid = &Func{Name: "comm", Sig: "comm(pid)", Doc: "the name of process pid (its task's comm, through the kfunc bpf_task_from_pid), N/A where there is none; where the probe's programs may call that kfunc", Infer: func(c Call) types.Type {
	if arity(c, "comm(pid)", 1, 1) {
		if t := c.Arg(0); !t.IsInt() && t.Kind != types.Invalid {
			c.Errorf(0, "e.g. comm(pid) or comm(1)", "Only integer supported for comm()'s pid")
		}
	}
	return types.Str(CommPidLen)
}}
