// Package runtime holds no code: its subpackages run what codegen compiled.
//
//   - runtime/kernel: the kernel environment (BTF and its caches, discovery
//     of skb functions, tracefs, kallsyms, feature probes, privileges); a leaf.
//   - runtime/session: load, attach, read events and maps, detach.
//   - runtime/output: printing, one formatter per format (text, json,
//     bpftrace, timeline, graph) and the pcapng sink.
//   - runtime/metrics: the maps served to Prometheus while tracing.
//   - runtime/pipeline: from a script to a running session (parse, check,
//     choose the backend, plan targets, passes, compile, start), shared by
//     cmd/skbtrace, bench and tests.
//
// Arrows point down only: pipeline imports session, output, metrics' peers
// and kernel; session imports output and kernel; output and kernel import
// neither.
package runtime
