// Package pipeline takes a script from its source to a running session, as
// skbtrace does it: parse; check against the kernel's types (its BTF cache
// where that answers, else the whole BTF, --btf's file instead); the
// passes that prune it to this kernel (check.Prune) and add --filter, the
// pod filters and -w (passes.Filter, passes.Scope, passes.Capture); discovery of the functions skb:
// probes attach to and the choice of their backend (or the tracepoint
// fallback), skbret:'s targets, function globs' backends; event options;
// code generation; the start of the session. It also writes the scripts
// --filter, --timeline and --graph run without one (with BPF programs as
// hops), gives -l's listings as lines, and adapts a names.Resolver to what
// the output prints of pods and containers (Names) and the session keeps
// the pod filters' map with (Scope).
//
// Package main (cmd/skbtrace) keeps flags, I/O, the run loop, signals and
// exit codes; bench and tests drive the same pipeline. What the pipeline
// says along the way goes to Config.Warn, a line at a time; its errors are
// values (a script's are *lang.Diagnostics).
//
// A run: New(cfg), Parse, Check, Compile, Start, and Close at the end
// (which saves the names the check looked up to the BTF cache).
package pipeline
