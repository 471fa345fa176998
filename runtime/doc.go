// Package runtime holds no code: its subpackages run what codegen compiled.
//
//   - runtime/kernel: the kernel environment (BTF and its caches, discovery
//     of skb functions, tracefs, kallsyms, feature probes, privileges); it
//     imports only lang/types.
//   - runtime/session: load, attach, read events and maps, detach.
//   - runtime/attach: one program to its one attach point, a file per kind.
//   - runtime/output: printing, one formatter per format (text, json,
//     bpftrace, timeline, graph) and the pcapng sink.
//   - runtime/metrics: the maps served to Prometheus while tracing.
//   - runtime/names: the kernel's IDs (netns inode, cgroup ID, PID, host
//     veth, pod IP) to pods, containers and ip netns names, from the CRI,
//     /proc, podman's and Docker's stores; it imports nothing of skbtrace.
//   - runtime/rules: which rule or action dropped a packet (nftables with
//     --nftrace, iptables-nft, iptables-legacy, tc), for rule(); it imports
//     nothing of skbtrace.
//   - runtime/pipeline: from a script to a running session (parse, check,
//     choose the backend, plan targets, passes, compile, start), shared by
//     cmd/skbtrace, bench and tests.
//
// Arrows point down only: pipeline imports session, kernel, output and
// names (and the compiler: lang, check, codegen); metrics imports session;
// session imports attach, output and kernel; attach and output import
// kernel; output knows names only through its Names interface, which
// pipeline adapts a names.Resolver to; kernel imports only lang/types;
// names imports none of these; output imports rules (rule()'s values),
// which imports none of these. None but pipeline imports lang's AST or
// check.
package runtime
