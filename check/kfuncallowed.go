package check

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
)

// CommPidInfo is what comm(pid) calls and reads: the BTF ids of the
// kfuncs bpf_task_from_pid and bpf_task_release, and where struct
// task_struct keeps comm.
type CommPidInfo struct {
	TaskFromPid, TaskRelease btf.TypeID
	CommOffset               uint32
}

// kfuncProgType is the program type (as kernel.KfuncProgTypes names it)
// of a spec's programs, for kfunc_allowed: what the code generator loads
// them as. skb: and skbret: count as kprobes, the form every function
// backend but fentry gives them.
func kfuncProgType(si *SpecInfo) string {
	switch si.Spec.Kind {
	case lang.ProbeBegin, lang.ProbeEnd, lang.ProbeInterval, lang.ProbeSelf:
		return "raw_tracepoint"
	case lang.ProbeFentry, lang.ProbeFexit, lang.ProbeBpf, lang.ProbeBpfRet:
		return "tracing"
	case lang.ProbeTracepoint:
		if si.Record != nil {
			return "tracepoint"
		}
		return "tracing"
	case lang.ProbeProfile:
		return "perf_event"
	case lang.ProbeTest, lang.ProbeBench:
		return "xdp"
	}
	return "kprobe"
}

// kfuncAllowed says whether every program of the probe may call kfunc;
// where one may not, its spec.
func (c *checker) kfuncAllowed(kfunc string) (bool, *SpecInfo) {
	if c.ctx == nil || c.opts.KfuncAllowed == nil {
		return false, nil
	}
	for _, si := range c.ctx.Specs {
		if !c.opts.KfuncAllowed(kfuncProgType(si), kfunc) {
			return false, si
		}
	}
	return true, nil
}

// kfuncAllowedCall records kfunc_allowed("name")'s value.
func (c *checker) kfuncAllowedCall(e *lang.CallExpr) {
	if len(e.Args) != 1 {
		return
	}
	if k, ok := c.info.Consts[lang.Unparen(e.Args[0])]; ok && k.IsStr {
		ok, _ := c.kfuncAllowed(k.Str)
		c.info.Consts[e] = boolConst(ok)
	}
}

// commPidCall checks comm(pid): the probe's programs may call
// bpf_task_from_pid (bpftrace's error where they may not), and the BTF
// has what the code needs.
func (c *checker) commPidCall(e *lang.CallExpr) {
	if len(e.Args) != 1 {
		return
	}
	if ok, si := c.kfuncAllowed("bpf_task_from_pid"); !ok {
		kind := "unknown"
		if si != nil {
			kind = string(si.Spec.Kind)
		}
		c.errorf(e, "comm(pid) calls the kfunc bpf_task_from_pid, which the kernel lets tracing (fentry, fexit, tp_btf), tracepoint, profile, test and bench programs call", "Syntax comm(PID) is not supported in this probe type yet. Type: %s", kind)
		return
	}
	if c.info.CommPid != nil {
		return
	}
	spec := wholeSpec(c.opts.BTF)
	var from, release *btf.Func
	var task *btf.Struct
	if spec == nil || spec.TypeByName("bpf_task_from_pid", &from) != nil || spec.TypeByName("bpf_task_release", &release) != nil || spec.TypeByName("task_struct", &task) != nil {
		c.errorf(e, "", "comm(pid): the kernel's BTF has no bpf_task_from_pid, bpf_task_release or struct task_struct")
		return
	}
	info := &CommPidInfo{}
	info.TaskFromPid, _ = spec.TypeID(from)
	info.TaskRelease, _ = spec.TypeID(release)
	for _, m := range task.Members {
		if m.Name == "comm" {
			info.CommOffset = m.Offset.Bytes()
		}
	}
	c.info.CommPid = info
}
