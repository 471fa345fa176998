// Package stdlib declares skbtrace's builtins in one place: the skb fields,
// the context values, the constants and the functions. Each declaration says
// its name, its type, what the probe must provide for it, and how it is read;
// the checker and the code generator both work from these tables, so adding a
// field such as `ttl` touches only this package.
package stdlib

import "github.com/skbtrace/skbtrace/lang/types"

// Need is what a builtin requires of the probe it is used in.
type Need uint8

// Needs.
const (
	NeedSkb    Need = 1 << iota // a struct sk_buff * is known
	NeedRetval                  // a return probe (kretprobe, fexit)
	NeedReason                  // a drop reason is known
	NeedFunc                    // a kernel function is traced (not BEGIN/END/interval/tracepoint)
)

// SourceKind says where a builtin's value comes from.
type SourceKind uint8

// Sources.
const (
	// SrcSkbPath reads a chain of BTF members starting at the skb.
	SrcSkbPath SourceKind = iota
	// SrcHeader reads bytes of the packet's network (Layer 3) or transport
	// (Layer 4) header, at an offset that depends on the IP version.
	SrcHeader
	// SrcContext is computed by a helper or from the probe context; Name says which.
	SrcContext
)

// Source describes how to read a builtin's value.
type Source struct {
	Kind SourceKind
	// Path is the member chain from struct sk_buff, e.g. dev, name.
	Path []string
	// Layer, Off4, Off6, Width describe a header read: the header layer, the
	// offset for IPv4 and IPv6 (Off6 < 0 when IPv4 only), and the width in bytes.
	Layer      int
	Off4, Off6 int
	Width      int
	// TCPOnly restricts a Layer 4 read to TCP segments (0 otherwise).
	TCPOnly bool
	// BigEndian values are converted to host order.
	BigEndian bool
}

// Field is a builtin name that reads a value: `len`, `dev`, `pid`...
type Field struct {
	Name  string
	Doc   string
	Type  types.Type
	Needs Need
	Src   Source
}

func path(p ...string) Source { return Source{Kind: SrcSkbPath, Path: p} }
func ctx() Source             { return Source{Kind: SrcContext} }

// Fields are the skb fields and context values, in the order -l prints them.
var Fields = []*Field{
	{Name: "skb", Doc: "the packet, a typed pointer: skb->dev->name, skb->sk->...", Type: types.Type{Kind: types.Ptr}, Needs: NeedSkb, Src: path()},
	{Name: "len", Doc: "skb->len: bytes of data in the skb", Type: types.U32, Needs: NeedSkb, Src: path("len")},
	{Name: "mark", Doc: "skb->mark, the firewall mark", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtHex}, Needs: NeedSkb, Src: path("mark")},
	{Name: "dev", Doc: "name of skb->dev, the interface", Type: types.Str(16), Needs: NeedSkb, Src: path("dev", "name")},
	{Name: "ifindex", Doc: "skb->dev->ifindex", Type: types.S32, Needs: NeedSkb, Src: path("dev", "ifindex")},
	{Name: "netns", Doc: "inode number of the device's network namespace", Type: types.U32, Needs: NeedSkb, Src: path("dev", "nd_net", "net", "ns", "inum")},
	{Name: "proto", Doc: "L3 protocol (skb->protocol): ipv4, ipv6, arp...; compared with an L4 name such as tcp it tests l4proto", Type: types.Type{Kind: types.Int, Size: 2, Fmt: types.FmtEtherType}, Needs: NeedSkb, Src: Source{Kind: SrcSkbPath, Path: []string{"protocol"}, BigEndian: true}},
	{Name: "l4proto", Doc: "L4 protocol from the IP header: tcp, udp, icmp...", Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtIPProto}, Needs: NeedSkb, Src: Source{Kind: SrcHeader, Layer: 3, Off4: 9, Off6: 6, Width: 1}},
	{Name: "ipver", Doc: "IP version from the IP header: 4 or 6, 0 for none", Type: types.U8, Needs: NeedSkb, Src: Source{Kind: SrcHeader, Layer: 3, Width: 1}},
	{Name: "saddr", Doc: "source address, IPv4 or IPv6", Type: types.IP, Needs: NeedSkb, Src: Source{Kind: SrcHeader, Layer: 3, Off4: 12, Off6: 8, Width: 16}},
	{Name: "daddr", Doc: "destination address, IPv4 or IPv6", Type: types.IP, Needs: NeedSkb, Src: Source{Kind: SrcHeader, Layer: 3, Off4: 16, Off6: 24, Width: 16}},
	{Name: "sport", Doc: "TCP/UDP source port", Type: types.U16, Needs: NeedSkb, Src: Source{Kind: SrcHeader, Layer: 4, Off4: 0, Off6: 0, Width: 2, BigEndian: true}},
	{Name: "dport", Doc: "TCP/UDP destination port", Type: types.U16, Needs: NeedSkb, Src: Source{Kind: SrcHeader, Layer: 4, Off4: 2, Off6: 2, Width: 2, BigEndian: true}},
	{Name: "tcpflags", Doc: "TCP flags byte: FIN SYN RST PSH ACK URG ECE CWR", Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtTCPFlags}, Needs: NeedSkb, Src: Source{Kind: SrcHeader, Layer: 4, Off4: 13, Off6: 13, Width: 1, TCPOnly: true}},
	{Name: "pkt_type", Doc: "skb->pkt_type: host, broadcast, multicast, otherhost, outgoing", Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtPktType}, Needs: NeedSkb, Src: path("pkt_type")},
	{Name: "hash", Doc: "skb->hash, the flow hash", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtHex}, Needs: NeedSkb, Src: path("hash")},
	{Name: "priority", Doc: "skb->priority", Type: types.U32, Needs: NeedSkb, Src: path("priority")},
	{Name: "tcpstate", Doc: "TCP state of the skb's socket (skb->sk): ESTABLISHED, SYN_SENT...; 0 without one", Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtTCPState}, Needs: NeedSkb, Src: path("sk", "__sk_common", "skc_state")},
	{Name: "reason", Doc: "drop reason (enum skb_drop_reason) on kfree_skb and sk_skb_reason_drop", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtEnum}, Needs: NeedReason, Src: ctx()},

	{Name: "func", Doc: "the traced kernel function", Type: types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtKsym}, Needs: NeedFunc, Src: ctx()},
	{Name: "cpu", Doc: "the CPU the event ran on", Type: types.U32, Src: ctx()},
	{Name: "pid", Doc: "process id (the kernel's tgid)", Type: types.U32, Src: ctx()},
	{Name: "tid", Doc: "thread id", Type: types.U32, Src: ctx()},
	{Name: "comm", Doc: "name of the current task", Type: types.Str(16), Src: ctx()},
	{Name: "time", Doc: "when the event happened, printed as the wall-clock time HH:MM:SS", Type: types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtTime}, Src: ctx()},
	{Name: "nsecs", Doc: "monotonic time in nanoseconds", Type: types.U64, Src: ctx()},
	{Name: "elapsed", Doc: "nanoseconds since tracing started", Type: types.U64, Src: ctx()},
	{Name: "kstack", Doc: "the kernel stack", Type: types.Type{Kind: types.Stack}, Src: ctx()},
	{Name: "retval", Doc: "the return value, on kretprobe and fexit", Type: types.S64, Needs: NeedRetval, Src: ctx()},
}

// byName indexes a table by its entries' names.
func byName[T any](items []T, name func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		m[name(it)] = it
	}
	return m
}

var fieldIndex = byName(Fields, func(f *Field) string { return f.Name })

// LookupField finds a field or context value by name.
func LookupField(name string) *Field { return fieldIndex[name] }

// Const is a named constant: a protocol, a packet type or a TCP flag.
type Const struct {
	Name  string
	Value uint64
	Type  types.Type
}

func l4(name string, v uint64) *Const {
	return &Const{Name: name, Value: v, Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtIPProto, Layer: 4}}
}

func l3(name string, v uint64) *Const {
	return &Const{Name: name, Value: v, Type: types.Type{Kind: types.Int, Size: 2, Fmt: types.FmtEtherType, Layer: 3}}
}

func flag(name string, v uint64) *Const {
	return &Const{Name: name, Value: v, Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtTCPFlags}}
}

func pkt(name string, v uint64) *Const {
	return &Const{Name: name, Value: v, Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtPktType}}
}

// Consts are the named constants.
var Consts = []*Const{
	l4("icmp", 1), l4("igmp", 2), l4("ipip", 4), l4("tcp", 6), l4("udp", 17), l4("gre", 47),
	l4("esp", 50), l4("ah", 51), l4("icmpv6", 58), l4("sctp", 132), l4("udplite", 136),
	l3("ip", 0x0800), l3("ipv4", 0x0800), l3("arp", 0x0806), l3("vlan", 0x8100), l3("ipv6", 0x86DD),
	l3("mpls", 0x8847), l3("qinq", 0x88A8),
	flag("FIN", 0x01), flag("SYN", 0x02), flag("RST", 0x04), flag("PSH", 0x08), flag("ACK", 0x10),
	flag("URG", 0x20), flag("ECE", 0x40), flag("CWR", 0x80),
	pkt("host", 0), pkt("broadcast", 1), pkt("multicast", 2), pkt("otherhost", 3), pkt("outgoing", 4), pkt("loopback", 5),
}

var constIndex = byName(Consts, func(c *Const) string { return c.Name })

// LookupConst finds a named constant.
func LookupConst(name string) *Const { return constIndex[name] }

// Names lists every builtin name: fields, constants, functions, for hints.
func Names() []string {
	var n []string
	for _, f := range Fields {
		n = append(n, f.Name)
	}
	for _, c := range Consts {
		n = append(n, c.Name)
	}
	n = append(n, "args")
	return n
}
