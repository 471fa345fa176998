// Package types describes the values of skbtrace scripts: integers of a width
// and signedness, strings, addresses, BTF pointers and structs, stacks, and map
// aggregations. It is a leaf package shared by stdlib, check and codegen.
package types

import (
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// Kind is the broad class of a value.
type Kind uint8

// The kinds of values.
const (
	Invalid  Kind = iota
	Void          // a call made for its effect
	Int           // an integer: Size 1, 2, 4 or 8 bytes, Signed
	String        // a NUL-padded string of Size bytes
	Addr          // an IPv4 or IPv6 address
	CIDR          // an address prefix literal, only on the right of `in`
	Ptr           // a kernel pointer; BTF is the pointee
	Struct        // a struct or union reached by `.`/`->`; BTF is the type
	Array         // a BTF array; BTF is the *btf.Array
	Stack         // a kernel stack (kstack)
	Agg           // an aggregation (count(), hist()...) assigned to a map
	Args          // the probe's `args`, only before `.NAME`
	MapRef        // a whole map, as an argument of print/clear
	Endpoint      // an address and a port: endpoint(saddr, sport)
	Packet        // the packet's headers (pkt), printed as tcpdump's one-line decode
	Tuple         // bpftrace's tuple (1, "a") or record (a=1, b="a"); Tuple says its elements
)

// Fmt says how an integer is printed.
type Fmt uint8

// Integer formats.
const (
	FmtDec       Fmt = iota
	FmtHex           // 0x1f
	FmtBool          // true/false
	FmtEtherType     // ipv4, ipv6, arp...
	FmtIPProto       // tcp, udp, icmp...
	FmtTCPFlags      // SYN|ACK
	FmtPktType       // host, broadcast...
	FmtEnum          // a BTF enumerator's name
	FmtKsym          // a kernel symbol name from an address
	FmtErrno         // a negative errno as its name, else decimal
	FmtTCPState      // a TCP state: ESTABLISHED, SYN_SENT...
	FmtTime          // monotonic nanoseconds, printed as the wall-clock time
	FmtCtState       // a conntrack state: new, established, related, invalid, untracked
	FmtNfHook        // a netfilter hook: prerouting, input, forward, output, postrouting
	FmtDropWhy       // a drop reason (BTF is the enum), printed as a sentence
	FmtMAC           // 6 bytes as they sit in memory, printed as 52:54:00:12:34:56
	FmtRet           // skbret's retval where the functions return different types: printed as each returns it
	FmtStrftime      // nanoseconds since boot printed by a strftime format (Layout): strftime("%H:%M:%S", nsecs)
	FmtBuf           // a String holding buf()'s bytes: a length byte, then the bytes, printed as bpftrace prints a buffer (\x01 escapes)
	FmtProbe         // the probe's name (bpftrace's probe): an index into the script's names, or a function's address (stdlib.ProbeFunc)
	FmtUsym          // a String of 16 bytes: a user-space address and its process's id (usym), printed as the function that holds the address
	FmtNetns         // a network namespace's inode, printed as the number and, where user space knows it, the pod, container or ip netns it is: 4026532177 (default/web-0)
	FmtPod           // a network namespace's inode, printed as the name of the pod it is (pod); "" where it is no pod's
	FmtPodNS         // a network namespace's inode, printed as the Kubernetes namespace of the pod it is (podns)
	FmtContainer     // a network namespace's inode, printed as the names of the containers in it (container)
	FmtPid           // a process id, printed as the number and the pod or container it runs in: 4242 (default/web-0)
	FmtDev           // a String: an interface's name, and the pod or container behind it where it is a host-side veth: veth3058d24e (default/web-0)
	FmtRule          // a record of a drop (reason, netns, dev, l4proto, saddr, sport, daddr, dport) printed as the rule or action that dropped it, named in user space (runtime/rules): rule()
)

// Named reports whether values of this format are names user space
// resolves from an ID (FmtPod, FmtPodNS, FmtContainer): printed as text,
// never compared in BPF.
func (f Fmt) Named() bool { return f == FmtPod || f == FmtPodNS || f == FmtContainer }

// AggKind is the aggregation a map holds.
type AggKind uint8

// Aggregations.
const (
	AggNone AggKind = iota
	AggCount
	AggSum
	AggAvg
	AggMin
	AggMax
	AggStats
	AggHist
	AggLhist
	AggTseries
)

var aggNames = [...]string{"", "count", "sum", "avg", "min", "max", "stats", "hist", "lhist", "tseries"}

// String is the aggregation function's name.
func (a AggKind) String() string { return aggNames[a] }

// Type is the type of a value.
type Type struct {
	Kind   Kind
	Size   int // bytes: Int width, String buffer
	Signed bool
	Fmt    Fmt
	// BTF is the pointee (Ptr), the struct or union (Struct), the array
	// (Array), or the enum (FmtEnum).
	BTF btf.Type
	Agg AggKind
	// Layer is 3 or 4 for a protocol constant (tcp: 4, ipv6: 3), else 0.
	Layer int
	// Layout is a FmtStrftime value's strftime format.
	Layout string
	// Tuple is a Tuple's elements (a pointer, so that types stay
	// comparable).
	Tuple *TupleType
	// User marks a pointer into the traced process's memory (a syscall
	// tracepoint's pointer field, a u64 where it points to char), and a
	// struct reached through one: what it points to is read with
	// bpf_probe_read_user. Variables and map values keep it.
	User bool
	// Cut marks a string str() read of max_strlen bytes (Size is one
	// more, for the NUL): where its text fills them, the source was
	// longer, and it prints with bpftrace's trailer, "..", or the one
	// str_trunc_trailer gives: Layout is then TrailerPrefix and it.
	Cut bool
}

// TrailerPrefix starts a cut string's Layout where str_trunc_trailer
// gives its trailer.
const TrailerPrefix = "trailer:"

// Common types.
var (
	U8   = Type{Kind: Int, Size: 1}
	U16  = Type{Kind: Int, Size: 2}
	U32  = Type{Kind: Int, Size: 4}
	U64  = Type{Kind: Int, Size: 8}
	S32  = Type{Kind: Int, Size: 4, Signed: true}
	S64  = Type{Kind: Int, Size: 8, Signed: true}
	Bool = Type{Kind: Int, Size: 1, Fmt: FmtBool}
	None = Type{Kind: Void}
	Bad  = Type{Kind: Invalid}
	IP   = Type{Kind: Addr, Size: 16}
)

// Str returns a string type of n bytes.
func Str(n int) Type { return Type{Kind: String, Size: n} }

// IsInt reports whether t is an integer.
func (t Type) IsInt() bool { return t.Kind == Int }

// IsScalar reports whether t fits a register: integers and pointers.
func (t Type) IsScalar() bool { return t.Kind == Int || t.Kind == Ptr }

// String names the type for messages: u32, s64, string[16], struct sk_buff *.
func (t Type) String() string {
	switch t.Kind {
	case Void:
		return "void"
	case Int:
		sign := "u"
		if t.Signed {
			sign = "s"
		}
		if t.Fmt == FmtBool {
			return "bool"
		}
		if t.Fmt == FmtEnum && t.BTF != nil {
			return "enum " + t.BTF.TypeName()
		}
		return fmt.Sprintf("%s%d", sign, t.Size*8)
	case String:
		if t.Fmt == FmtBuf {
			return fmt.Sprintf("buf[%d]", t.Size-1)
		}
		return fmt.Sprintf("string[%d]", t.Size)
	case Addr:
		return "inet"
	case CIDR:
		return "cidr"
	case Ptr:
		return CName(t.BTF) + " *"
	case Struct:
		return CName(t.BTF)
	case Array:
		if a, ok := t.BTF.(*btf.Array); ok {
			return fmt.Sprintf("%s[%d]", CName(a.Type), a.Nelems)
		}
		return "array"
	case Stack:
		return "kstack"
	case Agg:
		return t.Agg.String() + "()"
	case Args:
		return "args"
	case MapRef:
		return "map"
	case Endpoint:
		return "endpoint"
	case Packet:
		return "packet"
	case Tuple:
		return t.Tuple.String()
	}
	return "invalid"
}

// Members lists a struct's or union's members, through typedefs and
// qualifiers; nil for any other type.
func Members(t btf.Type) []btf.Member {
	switch u := btf.UnderlyingType(t).(type) {
	case *btf.Struct:
		return u.Members
	case *btf.Union:
		return u.Members
	}
	return nil
}

// CName names a BTF type as C would: struct sk_buff, unsigned int, void.
func CName(t btf.Type) string {
	switch t := t.(type) {
	case nil, *btf.Void:
		return "void"
	case *btf.Struct:
		return "struct " + t.Name
	case *btf.Union:
		return "union " + t.Name
	case *btf.Enum:
		return "enum " + t.Name
	case *btf.Pointer:
		return CName(t.Target) + " *"
	case *btf.FuncProto:
		return "function"
	case *btf.Const:
		return "const " + CName(t.Type)
	case *btf.Volatile:
		return "volatile " + CName(t.Type)
	case *btf.Restrict:
		return CName(t.Type)
	case *btf.TypeTag:
		return CName(t.Type)
	}
	return t.TypeName()
}

// SignedOp reports whether arithmetic or a comparison on x and y is
// signed: one of them is, and the other, if unsigned, is narrower than 64
// bits and so fits an s64 exactly (0 - len is -len; len > -1 is true).
func SignedOp(x, y Type) bool {
	fits := func(t Type) bool { return t.Signed || t.Size < 8 }
	return (x.Signed || y.Signed) && fits(x) && fits(y)
}
