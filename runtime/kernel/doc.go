// Package kernel holds the facts skbtrace needs about the running kernel,
// each found once per process (or cached on disk per kernel build) and
// asked by the checker's options, the code generator's options, the
// session and the command:
//
//   - its BTF, decoded once (BTF, SpecCache), and a small on-disk cache of
//     the types earlier runs looked up (CachedTypes, RecordingTypes,
//     SaveTypes);
//   - the functions skb: probes can attach to, from a scan of vmlinux's and
//     the modules' raw BTF intersected with what can be traced (Discovery,
//     CachedDiscovery) with how each returns its value (lang/types'
//     RetClass, the code generator's too), and the tracepoints that carry an sk_buff
//     (SkbTracepoints), their fallback;
//   - the traceable functions of kprobe:GLOB and fentry:GLOB
//     (TraceableFuncs), tracefs and its tracepoints (Tracefs,
//     TracepointFormat, MatchTracepoints, TracepointCategory);
//   - kallsyms (Symbols, KsymAddr), the online CPUs, and how a struct
//     page pointer becomes its bytes' address (PageVirt);
//   - what the kernel allows: feature probes (HaveFuncIPHelper,
//     HaveRingBuffer, HaveKprobes, NoPrealloc) and the caller's privileges
//     (CheckPrivileges).
//
// It imports none of skbtrace's packages but lang/types (a leaf: the types
// of values), so the checker's and code generator's options, the runtime
// and the tests can all ask it; the compiler packages do not import it.
// It is not where programs are loaded or attached (runtime/session,
// runtime/attach), nor where events are read or printed (runtime/output),
// and it makes no decision from these facts (which backend, which
// targets: runtime/pipeline): it only reports them. Probes that load a program say so
// in their doc comment.
package kernel
