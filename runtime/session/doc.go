// Package session runs a compiled script: it loads codegen.Output's
// programs and maps into the kernel, attaches each program as its
// codegen.Attach descriptor says (one file per kind of attach point:
// attachfuncs.go and attachglob.go for skb: and kprobe globs on every
// backend, attachbpf.go and bpfwatch.go for programs on BPF programs,
// attachuprobe.go, profile.go; the single-link kinds in attach), reads the
// event records and hands them to runtime/output's Printer, reads the maps
// for printing and for runtime/metrics, and on the way out turns the
// programs off (stop.go) and leaves the links to a detach helper
// (handoff.go), which waits while any run starts (gate.go). Where skb:
// probes attach to functions, auto weighs the backends by the script's cost
// on this kernel (cost.go), fentry programs load on every CPU ahead of
// their links, and a progressive start attaches a packet's main path first
// and the rest while tracing (progressive.go, mainpath.go); on
// kprobe-multi an skb: probe is one program, given each function's attach
// cookie, linked for the main path first (latemulti.go). Misses
// (misses.go, missesprogs.go) reads what was not seen: runs of the
// programs the kernel skipped, records lost, functions not attached,
// captures cut; other parts add their own with AddMisses.
//
// It imports codegen (the compiled script, the whole contract), runtime/kernel
// and runtime/output; never lang's AST or check.
package session
