// Package check resolves and type-checks a parsed script against the builtins
// of stdlib and the running kernel's BTF. It never changes the tree: what it
// learns is recorded in an Info beside it, as go/types does. What this
// kernel decides of the script (the probe specs missing_probes drops,
// has()'s answers) is recorded too, and Prune applies it: it returns the
// script as this kernel runs it, which the code generator compiles, and
// that script's Info.
package check

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// Info is what the checker learned about a script.
type Info struct {
	// Types holds the type of every expression.
	Types map[lang.Expr]types.Type
	// Fields maps identifiers that name builtin fields or context values.
	Fields map[*lang.Ident]*stdlib.Field
	// Consts holds the value of every constant expression: literals, named
	// constants, positional parameters, enum names compared as strings.
	Consts map[lang.Expr]Const
	// Calls maps each call to its builtin.
	Calls map[*lang.CallExpr]*stdlib.Func
	// CommPid is what comm(pid)'s code needs of the kernel's BTF, where
	// the script calls it (kfuncallowed.go).
	CommPid *CommPidInfo
	// Members records the BTF member each `.`/`->` resolves to.
	Members map[*lang.FieldExpr]Member
	// ArgRefs maps `args.NAME` and `argN` to the probe parameter they read.
	ArgRefs map[lang.Expr]int
	// Maps describes each map by name.
	Maps map[string]*MapInfo
	// MapDecls are the script's map declarations by map name
	// (let @m = lruhash(N)): the kernel map's type and size.
	MapDecls map[string]*lang.MapDecl
	// MapOrder lists the map names in the order they first appear.
	MapOrder []string
	// Probes describes each probe's context.
	Probes map[*lang.Probe]*ProbeInfo
	// Vars holds each probe's scratch variables and their types.
	Vars map[*lang.Probe]map[string]types.Type
	// SkbPaths resolves the member chains of the stdlib fields used.
	SkbPaths map[*stdlib.Field][]Member
	// Formats holds each printf's parsed format.
	Formats map[*lang.CallExpr][]stdlib.Verb
	// DataLocs maps args.NAME on a __data_loc field of a classic
	// tracepoint to where its string is.
	DataLocs map[lang.Expr]DataLoc
	// Pcap holds the expression each pcap("filter") call compiles to.
	Pcap map[*lang.CallExpr]lang.Expr
	// Netfilter holds the offsets hook, table and chain read; nil when the
	// script uses none of them.
	Netfilter *NfLayout
	// Capture holds the fields each capture() call annotates its frame
	// with: mark, netns, ifindex, dev.
	Capture map[*lang.CallExpr][]lang.Expr
	// Frags is where capture() finds a non-linear skb's paged data; nil
	// where the script has no capture() or the BTF does not say.
	Frags *FragLayout
	// FuncNames holds, for `func == "NAME"` (or a ksym() value compared
	// with a string), the function name compared with.
	FuncNames map[*lang.BinaryExpr]string
	// ProbeNames holds, for `probe == "NAME"`, the name compared with.
	ProbeNames map[*lang.BinaryExpr]string
	// TupleElems holds the element each `.N` (`.name` of a record) after
	// a tuple reads.
	TupleElems map[*lang.FieldExpr]int
	// TupleIdx holds, for each `x[N]` on a tuple (bpftrace 0.25's
	// array-style access), the `x.N` it reads: a FieldExpr of its own,
	// typed and in TupleElems, which code generation uses in its place.
	TupleIdx map[*lang.IndexExpr]*lang.FieldExpr
	// Loops says how each for loop runs.
	Loops map[*lang.ForStmt]*LoopInfo
	// SkbType is struct sk_buff from the kernel's BTF.
	SkbType *btf.Struct
	// Notes say, once each, what this kernel lacks that the script reads
	// and what still works: "this kernel has no drop reasons...". They
	// are not errors; the caller prints them.
	Notes []string
	// Config is what the script's config block set, defaults elsewhere.
	Config Config
	// Has holds the answer of each has() that decides a condition: an
	// if's, a probe predicate's or an operand of its &&. The checker
	// checks only what the answers keep (the branch taken, the probes
	// not ruled out); Prune takes out the rest.
	Has map[*lang.CallExpr]bool
	// Missing holds the probe specs missing_probes drops, whose function
	// or tracepoint this kernel does not have. The probes are checked
	// without them; Prune takes them out.
	Missing map[*lang.ProbeSpec]bool

	src *lang.Source
}

// Const is a constant value: an integer or a string.
type Const struct {
	Int   uint64
	Str   string
	IsStr bool
}

// Member is one resolved member access.
type Member struct {
	Name string
	// Offset is in bits from the start of the containing struct.
	Offset uint32
	// BitfieldSize is non-zero for a bitfield.
	BitfieldSize uint32
	// Deref is set when the access goes through a pointer (->).
	Deref bool
	Type  types.Type
	BTF   btf.Type
}

// MapInfo is a map's key and value types, agreed across all probes.
type MapInfo struct {
	Name string
	Keys []types.Type
	// KeyNames are the keys' source text where the map is first
	// assigned, one per key: "reason" and "dev" for @drops[reason, dev];
	// a tuple's elements for @m[(a, b)], and "$t.0", "$t.1" for @m[$t].
	KeyNames []string
	Value    types.Type
	// First is where the map was first assigned.
	First lang.Span
	// Assigned is false for a map that is only read.
	Assigned bool
}

// ProbeInfo is the context a probe's statements run in: what every one of
// its probe specs provides.
type ProbeInfo struct {
	Specs []*SpecInfo
	Skb   bool
	// Reason is set where a drop reason is known.
	Reason bool
	Func   bool
	// Entry is set on skbret: probes, whose function's entry was seen:
	// duration is known.
	Entry bool
	// Prog is set where every spec is a bpf: or bpfret: probe: prog and
	// prog_id are known.
	Prog bool
	// Retval is the return type on return probes, Invalid elsewhere.
	Retval types.Type
	// RetvalDiffers, where the specs of a list do not return one type, is
	// the first spec whose return differs from the first spec's, and
	// RetvalWhy says how; retval is then an error pointing at that spec.
	RetvalDiffers *lang.ProbeSpec
	RetvalWhy     string
	// Params are the typed arguments common to all specs; nil when the probe
	// has none (BEGIN, skb:GLOB...). NoArgs says why.
	Params []Param
	NoArgs string
	// Unresolved is set when a spec could not be resolved (already
	// reported); context errors are then not reported.
	Unresolved bool
	// Record and DataLocs are those of the specs when they are classic
	// tracepoints (see SpecInfo.Record).
	Record   *btf.Struct
	DataLocs map[string]DataLoc
}

// SpecInfo is what one probe spec attaches to.
type SpecInfo struct {
	Spec *lang.ProbeSpec
	// Proto is the function's or tracepoint's prototype (for tracepoints, the
	// tp_btf prototype, whose first parameter is the context and is skipped).
	Proto       *btf.FuncProto
	Params      []Param
	SkbParam    int // index in Params of the struct sk_buff *, or -1
	ReasonParam int // index in Params of the enum skb_drop_reason, or -1
	// Unresolved is set when the spec names nothing that exists.
	Unresolved bool
	// Record is set on a tracepoint read as bpftrace reads one, by its
	// tracefs format fields: the struct a classic tracepoint program's
	// context points to, whose members are args.NAME. DataLocs are its
	// __data_loc strings. Category is the tracefs category (never *).
	Record   *btf.Struct
	DataLocs map[string]DataLoc
	Category string
	// RecordMembers and RecordDataLocs are, for a spec of a probe list
	// whose record has args.NAME elsewhere than the first spec's, where
	// this spec's program reads it (Info.Members and Info.DataLocs have
	// the first spec's).
	RecordMembers  map[*lang.FieldExpr]Member
	RecordDataLocs map[lang.Expr]DataLoc
	// Funcs are, for a function probe with a glob (kprobe:tcp_*), one
	// SpecInfo per function it matches, each with its own prototype and
	// Func; the spec's Params are those all of them have alike.
	Funcs []*SpecInfo
	// Func is the function of one of Funcs.
	Func string
	// Progs are, for a bpf: or bpfret: spec, one SpecInfo per loaded
	// program it matches (bpfprog.go), each with its Prog, and Func its
	// entry function, which fentry attaches to.
	Progs []*SpecInfo
	Prog  *BPFProg
	// LateType is, on a bpf: or bpfret: spec, the type of program it
	// attaches to when one that it matches is loaded while tracing (the
	// runtime watches: codegen's Output.CompileLate): the type of those it
	// matched, its category, or "*" where its probe was checked without a
	// context (it matched several types, or none of a spec of any type).
	LateType string
	// Ret is, on a return probe's glob, this function's return type
	// (RetVoid: it returns nothing); the code reads retval as that type.
	Ret     types.Type
	RetVoid bool
	// Binary is a uprobe's or uretprobe's binary, found (a path); Func is
	// its function, UserOffset how far into it the probe is (+OFFSET, or
	// an address inside it), and FileOffset where that is in the file,
	// which the runtime attaches the uprobe at.
	Binary                 string
	UserOffset, FileOffset uint64
}

// Function is the function a function probe's spec is for: its own in a
// glob's per-function spec (Func, a uprobe's always), else the one the
// probe names.
func (si *SpecInfo) Function() string {
	if si.Func != "" {
		return si.Func
	}
	return si.Spec.Target
}

// Param is a typed probe argument.
type Param struct {
	Name  string
	Index int // position among the function's arguments
	Type  types.Type
	BTF   btf.Type
}

// Text is an expression's source text: print() names its values by it.
func (info *Info) Text(e lang.Expr) string { return info.src.Slice(e.Span()) }
