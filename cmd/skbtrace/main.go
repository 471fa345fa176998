// Command skbtrace traces Linux packets with a bpftrace-like language.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/metrics"
	"github.com/skbtrace/skbtrace/runtime/names"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
	"github.com/skbtrace/skbtrace/runtime/session"
	"github.com/skbtrace/skbtrace/scripts"
)

// version is set by the Makefile with -ldflags.
var version = "dev"

type options struct {
	program string
	// programSet is -e given, even empty.
	programSet bool
	list       string
	listSet    bool
	verbose    bool
	dump       bool
	format     string
	output     string
	command    string
	duration   string
	backend    string
	// progressive is --progressive: auto, true or false (progressive.go).
	progressive string
	btfFile     string
	events      string
	bufSize     string
	tools       bool
	version     bool
	filter      string
	write       string
	snaplen     int
	// nftrace is --nftrace: the nftables trace table (rules.go).
	nftrace bool
	// timeline groups print events per packet (--timeline).
	timeline bool
	// graph nests entries and returns per skb and CPU (--graph).
	graph bool
	// metrics is --metrics' address; metricsMaxSeries the most series of
	// one map it exports.
	metrics          string
	metricsMaxSeries int
	// webConfig is --web.config.file: TLS and basic auth for --metrics.
	webConfig string
	// bpfHops traces tc and XDP programs as hops of --filter, --timeline
	// and --graph (--bpf-hops, on by default).
	bpfHops bool
	// scope is the pod filters: --pod, --namespace, --container, --netns.
	scope names.Selector
	// names resolves IDs to pods and containers (--names, on by default);
	// criSocket is --cri-socket.
	names     bool
	criSocket string
	// quiet is -q: no "Attached N probes" (nor skbtrace's tracing line).
	quiet bool
	// bt are bpftrace's flags (btflags.go), btk those about the kernel
	// (btkernel.go).
	bt  btOptions
	btk btKernelOptions
	// tb is --test and --bench (testbench.go).
	tb testBenchOptions
	// debug is -d's value: dumpAll alone, else bpftrace's stages, which
	// stages holds (debugstages.go).
	debug  string
	stages debugStages
	// rotate is -C, -G and -W (rotate.go).
	rotate rotateOptions
	// overhead is --sample, --max-rate and --max-overhead (overhead.go).
	overhead overheadOptions
}

func main() {
	// Started to close a session's links after it ended: that and no more.
	if session.DetachHelper() {
		return
	}
	// First, so that a signal during loading and attaching is not lost.
	notifySignals()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, so that tests can drive the CLI.
func run(argv []string, stdout, stderr io.Writer) int {
	var o options
	setDiagColor(stderr)
	fs := pflag.NewFlagSet("skbtrace", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVarP(&o.program, "expr", "e", "", "trace this `PROGRAM`")
	fs.StringVarP(&o.list, "list", "l", "", "list probes matching `PATTERN`: skb:GLOB, skbret:GLOB, tracepoint:CAT:NAME, kprobe:GLOB, fentry:GLOB, 'struct NAME' (-lv: prototypes, return types, fields)")
	fs.Lookup("list").NoOptDefVal = "*"
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "verbose: prototypes with -l, timings, raw kernel errors")
	fs.StringVarP(&o.debug, "dump", "d", "", "alone: print the syntax tree and the generated code, then exit; -d `STAGE`[,STAGE] (bpftrace's: ast, types, codegen, verifier, all...): print those, then run (debugstages.go)")
	fs.Lookup("dump").NoOptDefVal = dumpAll
	fs.BoolVar(&o.nftrace, "nftrace", false, "name the nftables (and iptables-nft) rule that dropped a packet (whydrop, rule()): adds a table inet skbtrace_nftrace_PID to each network namespace with an nftables ruleset, whose chains set nftrace on its packets so that the kernel traces their verdicts; removed on exit (an owner table from Linux 5.12: removed by the kernel even after SIGKILL); with --netns, only in those namespaces")
	fs.StringVarP(&o.format, "format", "f", "text", "output format: text or json (one object a line: each event and map; with --timeline or --graph, each block)")
	fs.StringVarP(&o.output, "output", "o", "", "write output to `FILE`")
	fs.StringVarP(&o.command, "command", "c", "", "run `CMD` and trace until it exits")
	fs.StringVar(&o.duration, "duration", "", "trace for `D` (e.g. 10s, 500ms), then exit")
	fs.StringVar(&o.backend, "backend", "auto", "auto, kprobe-multi, kprobe, fentry or tracepoint")
	fs.StringVar(&o.progressive, "progressive", "auto", "attach the functions of a packet's main path first and trace while the others attach: true, false, or auto (where attaching takes long and no -c command waits)")
	fs.Lookup("progressive").NoOptDefVal = "true"
	fs.StringVar(&o.btfFile, "btf", "", "kernel BTF `FILE` for kernels without /sys/kernel/btf/vmlinux")
	fs.StringVar(&o.events, "events", "auto", "where events go: auto, ringbuf, or perf (a perf buffer, for kernels before 5.8)")
	fs.StringVar(&o.bufSize, "buffer-size", "", "event buffer `SIZE` (e.g. 64K, 8M): the ring buffer, or each CPU's perf buffer")
	fs.StringVar(&o.filter, "filter", "", "trace packets matching a tcpdump `FILTER` (pcap-filter(7)): alone, every hop of them; with a script, ANDed with each skb probe's predicate")
	fs.StringVarP(&o.write, "write", "w", "", "write every skb probe's packets to `FILE` as pcapng (- for stdout), one frame per hop")
	fs.IntVar(&o.snaplen, "snaplen", codegen.DefaultSnaplen, "bytes of each packet -w writes (0: the whole packet)")
	fs.BoolVar(&o.timeline, "timeline", false, "group print's events per packet: one block per skb, its hops in order, printed when it is freed (-f json: one object per block)")
	fs.BoolVar(&o.graph, "graph", false, "nest the calls of each packet per skb and CPU, with each function's return value and time: --graph 'skb:GLOB /PREDICATE/', --graph --filter 'FILTER', or a script's skb: and skbret: print()s (-f json: one object per block, its calls nested)")
	fs.StringVar(&o.metrics, "metrics", "", "while tracing, serve the maps to Prometheus on `ADDR` (:9464, 127.0.0.1:9464) at /metrics: counters, gauges, histograms, key parts as labels")
	fs.IntVar(&o.metricsMaxSeries, "metrics-max-series", metrics.DefaultMaxSeries, "with --metrics, export at most `N` series of each map: the largest")
	fs.StringVar(&o.webConfig, "web.config.file", "", "with --metrics, serve as `FILE` says: TLS, client certificates, basic auth users (node_exporter's web configuration file)")
	fs.BoolVar(&o.bpfHops, "bpf-hops", true, "with --filter, --timeline or --graph and no script: trace the tc and XDP programs on the path as hops, with their verdicts (fentry on BPF programs, where the kernel allows it); --bpf-hops=false leaves them out")
	fs.StringArrayVar(&o.scope.Pods, "pod", nil, "trace the packets of the pods `NAMESPACE/NAME` (shell globs; NAME alone: any namespace; repeatable), those started while tracing too; alone, every hop of their packets")
	fs.StringArrayVar(&o.scope.Namespaces, "namespace", nil, "trace the packets of the pods in Kubernetes namespace `NS` (globs, repeatable)")
	fs.StringArrayVar(&o.scope.Containers, "container", nil, "trace the packets of the containers named `NAME` (Kubernetes, podman or Docker; globs, repeatable)")
	fs.StringArrayVar(&o.scope.Netns, "netns", nil, "trace the packets of the network namespace `NS`: an ip netns name, a path (/proc/PID/ns/net) or an inode number (repeatable)")
	fs.BoolVar(&o.names, "names", true, "name the pods, containers and ip netns behind network namespaces, host-side veths, addresses and processes in the output (from the CRI, podman, Docker and /proc); --names=false prints the IDs alone")
	fs.StringVar(&o.criSocket, "cri-socket", "", "the container runtime's CRI `SOCKET` for pod names (default: $CONTAINER_RUNTIME_ENDPOINT, then containerd's, CRI-O's and k3s' usual sockets)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "keep messages quiet: no \"Attached N probes\" line")
	fs.BoolVar(&o.tools, "tools", false, "list the bundled tools")
	fs.BoolVarP(&o.version, "version", "V", false, "print the version")
	addBpftraceFlags(fs, &o.bt)
	addBtKernelFlags(fs, &o.btk)
	addTestBenchFlags(fs, &o.tb)
	addRotateFlags(fs, &o.rotate)
	addOverheadFlags(fs, &o.overhead)
	fs.Usage = func() {}
	fs.SetInterspersed(false)
	if err := fs.Parse(joinDebugStage(argv)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			usage(stderr, fs)
			return 0
		}
		fmt.Fprintf(stderr, "skbtrace: %v (see skbtrace -h)\n", err)
		return 1
	}
	o.listSet = fs.Changed("list")
	if o.version {
		fmt.Fprintf(stdout, "skbtrace %s\n", version)
		return 0
	}
	if o.bt.info {
		return printInfo(stdout)
	}
	o.dump = o.debug == dumpAll
	if st, err := parseDebugStages(o.debug); err != nil {
		return report(stderr, err)
	} else {
		o.stages = st
	}
	if err := o.bt.check(); err != nil {
		return report(stderr, err)
	}
	if err := o.btk.apply(&o, stderr); err != nil {
		return report(stderr, err)
	}
	if err := o.rotate.check(fs, o.write, o.output); err != nil {
		return report(stderr, err)
	}
	if err := o.overhead.check(); err != nil {
		return report(stderr, err)
	}
	if o.format != "text" && o.format != "json" {
		// bpftrace's error, then what to give.
		fmt.Fprintf(stderr, "ERROR: Invalid output format %q\nHINT: -f takes text or json, not %q\n", o.format, o.format)
		return 1
	}
	if err := session.CheckBackendName(o.backend); err != nil {
		return report(stderr, err)
	}
	if fs.Changed("command") && strings.TrimSpace(o.command) == "" {
		fmt.Fprintln(stderr, "skbtrace: -c takes a command to run, such as -c 'sleep 5'")
		return 1
	}
	o.programSet = fs.Changed("expr")
	if o.listSet {
		if err := kernel.CheckPrivileges(); err != nil {
			return report(stderr, err)
		}
		// -l takes its pattern after = (-l='ip_*') or as the next argument.
		pattern := o.list
		if args := fs.Args(); pattern == "*" && len(args) == 1 {
			pattern = args[0]
		}
		if err := listProbes(o.config(nil, stderr), pattern, stdout); err != nil {
			return report(stderr, err)
		}
		return 0
	}
	if o.tools {
		for _, t := range scripts.All() {
			fmt.Fprintf(stdout, "%-12s %s\n", t.Name, t.Summary)
		}
		return 0
	}
	switch {
	case o.snaplen < 0:
		fmt.Fprintf(stderr, "skbtrace: --snaplen takes a positive number of bytes, or 0 for whole packets\n")
		return 1
	case o.snaplen == 0 || o.snaplen > codegen.MaxSnaplen:
		o.snaplen = codegen.MaxSnaplen
	}
	if err := o.scope.Check(); err != nil {
		return report(stderr, err)
	}
	args, err := stdinProgram(&o, fs.Args())
	if err != nil {
		return report(stderr, err)
	}
	src, req, err := pipeline.ScriptFor(pipeline.Request{Program: o.program, ProgramSet: o.programSet, Args: args,
		Filter: o.filter, Timeline: o.timeline, Graph: o.graph, Capture: o.write != "", BPFHops: o.bpfHops, Scoped: !o.scope.Empty()}, warner(stderr))
	if err != nil {
		return report(stderr, err)
	}
	o.filter, o.graph = req.Filter, req.Graph
	if src != nil {
		// #include's headers, for their #defines (lang/include.go).
		src.IncludeDirs, src.Includes = o.bt.includeDirs, o.bt.include
	}
	if src == nil {
		usage(stderr, fs)
		return 1
	}
	if err := kernel.CheckPrivileges(); err != nil {
		return report(stderr, err)
	}
	return compileAndRun(o, src, stdout, stderr)
}

func usage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprintf(w, `usage:
  skbtrace -e 'PROGRAM' [ARGS...]    trace with a one-line program
  skbtrace SCRIPT.st [ARGS...]       trace with a script file
  skbtrace TOOL [ARGS...]            run a bundled tool (see --tools)
  skbtrace -l [PATTERN]              list probes (skb:GLOB, skbret:GLOB, tracepoint:..., ...)

example:
  skbtrace -e 'skb:* /mark == 0xdeadbeef/ { print(len, dev) }'

flags:
%s`, fs.FlagUsages())
}

// config is what the pipeline takes of the flags: params are the script's
// positional parameters.
func (o options) config(params []string, stderr io.Writer) pipeline.Config {
	return pipeline.Config{BTFFile: o.btfFile, Params: params, Backend: o.backend, Events: o.events, BufferSize: o.bufSize,
		Filter: o.filter, Capture: o.write != "", Snaplen: o.snaplen, Verbose: o.verbose, Warn: o.warner(stderr), Scope: !o.scope.Empty(),
		RuleFlows: o.nftrace, Sample: o.overhead.sampleN(), MaxRate: uint32(o.overhead.maxRate)}
}

// warner says the pipeline's lines on stderr.
func warner(stderr io.Writer) func(string) {
	return func(msg string) {
		if !strings.HasPrefix(msg, "ERROR: ") && !strings.HasPrefix(msg, "WARNING: ") {
			// A message in bpftrace's words keeps them alone.
			msg = "skbtrace: " + msg
		}
		fmt.Fprint(stderr, paintDiagnostics(msg+"\n", colorYellow))
	}
}
