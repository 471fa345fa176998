// Package output prints what a running script reports: its event records
// and its maps, in one of several formats.
//
// A Printer reads records from a Reader (the session's ring buffer or
// perf event array), decodes them by the codegen.Event their id names,
// and appends what they show to one buffer, written out when the reader
// has nothing pending: no allocation and no write per event. What a record
// looks like is its format's, a Formatter chosen by name from the
// registry in formats.go:
//
//   - text (text.go): print's records as pwru's columns, printf's text;
//   - json (json.go): one object a line, as bpftrace's -f json;
//   - bpftrace (bpftrace.go): text, with maps in bpftrace's layout, for
//     scripts written for bpftrace;
//   - timeline, timeline-json (timeline.go, timelinejson.go): print's
//     records grouped per packet, one block per skb or XDP frame;
//   - graph, graph-json (graph.go, graphjson.go): per skb and CPU, as a
//     call graph.
//
// A new format is one file with its Formatter, one line in the registry,
// and its flag in cmd. Value formatting is shared by every format (Values:
// value.go, appendfmt.go, decode.go, tuple.go, strftime.go, retval.go,
// usym.go), and so is map printing from a map's codegen.MapLayout
// (maps.go, aggs.go, printtop.go). pcapng.go writes capture()'s frames, a
// sink beside the format rather than a format.
//
// A Rotator (rotate.go, its files named in rotatename.go as tcpdump's -C,
// -G and -W name them) is the one rotating file set both sinks write to
// for -w and -o. It never rotates on its own: the pcapng sink asks it
// before each frame, and starts the new file with a section and interface
// blocks of its own; the printer asks before each write of whole records,
// and after each --timeline or --graph block; maps printed at exit go to
// the file of the moment.
//
// Names (names.go) are what a cluster user knows an ID by: given a Names
// (Values.SetNames; runtime/names' Resolver, adapted by the pipeline), text
// follows a network namespace, a host-side veth, an address or a process
// with its pod or container in parentheses, pod, podns and container print
// as names, JSON records get pod, namespace and container fields, the
// timeline's and graph's headers the pods a packet was in (trail.go), and
// pcapng comments pod= and container=. Each is a map read, never I/O.
//
// The session (package runtime) reads the kernel's maps and hands them
// over as MapData; Values.Entry decodes each element, so that what the
// session reads for others is formatted as printed. runtime/metrics is one
// more output of the same maps: it serves them to Prometheus, reading them
// through the session, whose keys and values come from Values here, and
// prints nothing.
//
// Output imports codegen, lang/types, stdlib, runtime/kernel (kallsyms
// for stack frames and function names) and internal/userbin (usym's
// symbols), never the session, the checker or the AST.
package output
