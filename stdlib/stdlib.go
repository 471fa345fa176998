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
	NeedEntry                   // the return side of a function whose entry was seen (skbret:)
	NeedProg                    // a BPF program is traced (bpf:, bpfret:)
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
	// SrcNetfilter is read from the netfilter hook the packet is in: its
	// struct nf_hook_state, found on the kernel stack, and the tables that
	// registered the hook's entries.
	SrcNetfilter
)

// Base is where a member chain starts.
type Base uint8

// Bases.
const (
	// BaseSkb: struct sk_buff.
	BaseSkb Base = iota
	// BaseShinfo: struct skb_shared_info, at skb->head + skb->end.
	BaseShinfo
	// BaseConn: struct nf_conn, skb->_nfct without its low three bits (the
	// ctinfo); NULL without a conntrack entry, so every member reads 0.
	BaseConn
	// BaseXdp: struct xdp_buff, an XDP program's context in bpf:xdp probes
	// (XdpFields).
	BaseXdp
)

// BaseStruct names the BTF struct a base is.
func (b Base) BaseStruct() string {
	return [...]string{"sk_buff", "skb_shared_info", "nf_conn", "xdp_buff"}[b]
}

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
	// TCPOnly restricts a Layer 4 read to TCP segments, ICMPOnly to ICMP
	// and ICMPv6 messages (0 otherwise).
	TCPOnly, ICMPOnly bool
	// Base is the struct a SrcSkbPath chain starts from: the skb itself,
	// its shared info, or its conntrack entry.
	Base Base
	// Mask, when not 0, keeps only these bits of the value read.
	Mask uint64
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

// tcp and icmp read a big-endian field of the TCP or ICMP header.
func tcp(off, width int) Source {
	return Source{Kind: SrcHeader, Layer: 4, Off4: off, Off6: off, Width: width, TCPOnly: true, BigEndian: true}
}

func icmp(off, width int) Source {
	return Source{Kind: SrcHeader, Layer: 4, Off4: off, Off6: off, Width: width, ICMPOnly: true, BigEndian: true}
}

// netnsPath reads the inode of the network namespace of the skb's device.
func netnsPath() Source { return path("dev", "nd_net", "net", "ns", "inum") }

func on(b Base, p ...string) Source { return Source{Kind: SrcSkbPath, Base: b, Path: p} }

// Fields are the skb fields and context values, in the order -l prints them.
var Fields = []*Field{
	{Name: "skb", Doc: "the packet, a typed pointer: skb->dev->name, skb->sk->...", Type: types.Type{Kind: types.Ptr}, Needs: NeedSkb, Src: path()},
	{Name: "len", Doc: "skb->len: bytes of data in the skb", Type: types.U32, Needs: NeedSkb, Src: path("len")},
	{Name: "mark", Doc: "skb->mark, the firewall mark", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtHex}, Needs: NeedSkb, Src: path("mark")},
	{Name: "dev", Doc: "name of skb->dev, the interface; printed with the pod or container behind it where it is a host-side veth: veth3058d24e (default/web-0)", Type: types.Type{Kind: types.String, Size: 16, Fmt: types.FmtDev}, Needs: NeedSkb, Src: path("dev", "name")},
	{Name: "ifindex", Doc: "skb->dev->ifindex", Type: types.S32, Needs: NeedSkb, Src: path("dev", "ifindex")},
	{Name: "netns", Doc: "inode number of the device's network namespace; printed with the pod, container or ip netns it is, where user space knows it: 4026532177 (default/web-0)", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtNetns}, Needs: NeedSkb, Src: netnsPath()},
	{Name: "pod", Doc: "the name of the Kubernetes pod whose network namespace the device is in (from the CRI, resolved in user space from netns); empty where it is no pod's; prints and keys maps, not compared: filter with --pod", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtPod}, Needs: NeedSkb, Src: netnsPath()},
	{Name: "podns", Doc: "the Kubernetes namespace of that pod (see pod)", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtPodNS}, Needs: NeedSkb, Src: netnsPath()},
	{Name: "container", Doc: "the containers in the device's network namespace: a pod's container names (comma-separated where several), or a podman or Docker container's name; empty where none (see pod)", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtContainer}, Needs: NeedSkb, Src: netnsPath()},
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
	{Name: "seq", Doc: "TCP sequence number", Type: types.U32, Needs: NeedSkb, Src: tcp(4, 4)},
	{Name: "ack", Doc: "TCP acknowledgment number", Type: types.U32, Needs: NeedSkb, Src: tcp(8, 4)},
	{Name: "win", Doc: "TCP window, as sent (before scaling)", Type: types.U16, Needs: NeedSkb, Src: tcp(14, 2)},
	{Name: "icmp_type", Doc: "ICMP or ICMPv6 type: 8 echo request, 0 echo reply, 3 unreachable...", Type: types.U8, Needs: NeedSkb, Src: icmp(0, 1)},
	{Name: "icmp_code", Doc: "ICMP or ICMPv6 code", Type: types.U8, Needs: NeedSkb, Src: icmp(1, 1)},
	{Name: "icmp_id", Doc: "ICMP echo identifier", Type: types.U16, Needs: NeedSkb, Src: icmp(4, 2)},
	{Name: "icmp_seq", Doc: "ICMP echo sequence number", Type: types.U16, Needs: NeedSkb, Src: icmp(6, 2)},
	{Name: "vlan", Doc: "VLAN id of the skb's tag (skb->vlan_tci), 0 without one", Type: types.U16, Needs: NeedSkb, Src: Source{Kind: SrcSkbPath, Path: []string{"vlan_tci"}, Mask: 0xfff}},
	{Name: "gso_size", Doc: "GSO segment size (skb_shinfo(skb)->gso_size), 0 when not GSO", Type: types.U16, Needs: NeedSkb, Src: on(BaseShinfo, "gso_size")},
	{Name: "gso_segs", Doc: "GSO segment count (skb_shinfo(skb)->gso_segs)", Type: types.U16, Needs: NeedSkb, Src: on(BaseShinfo, "gso_segs")},
	{Name: "ct", Doc: "the conntrack entry (struct nf_conn *, from skb->_nfct), NULL without one: ct->status, ct->tuplehash[0].tuple...", Type: types.Type{Kind: types.Ptr}, Needs: NeedSkb, Src: on(BaseConn)},
	{Name: "ct_state", Doc: "conntrack state as nftables names it: new, established, related, invalid (no entry), untracked", Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtCtState}, Needs: NeedSkb, Src: ctx()},
	{Name: "ct_mark", Doc: "the conntrack entry's mark (ct->mark), 0 without one", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtHex}, Needs: NeedSkb, Src: on(BaseConn, "mark")},
	{Name: "hook", Doc: "the netfilter hook the packet is in (prerouting, input, forward, output, postrouting), from its nf_hook_state on the kernel stack; - outside one", Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtNfHook}, Needs: NeedSkb, Src: Source{Kind: SrcNetfilter}},
	{Name: "table", Doc: "the nftables or iptables table hooked where the packet is (see hook); ? where several are, empty where none", Type: types.Str(32), Needs: NeedSkb, Src: Source{Kind: SrcNetfilter}},
	{Name: "chain", Doc: "the nftables base chain, or the iptables built-in chain, of table", Type: types.Str(32), Needs: NeedSkb, Src: Source{Kind: SrcNetfilter}},
	{Name: "pkt", Doc: "the packet's headers, printed as tcpdump prints them: IP 10.0.0.1.80 > 10.0.0.2.40000: Flags [S.], ...", Type: types.Type{Kind: types.Packet, Size: 136}, Needs: NeedSkb, Src: ctx()},
	// The logical packet (track(): packet.go).
	{Name: "packet", Doc: "the skb's logical packet (track()): the id the timeline and pcapng comments print, 0 where the skb is not followed", Type: types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtHex}, Needs: NeedSkb, Src: ctx()},
	{Name: "pkt_edge", Doc: "how the skb joined its logical packet: origin, clone, copy, segment, fragment, reassembled, merged, gro_head, encap; none where it is not followed", Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtEnum, BTF: PacketEdgeEnum}, Needs: NeedSkb, Src: ctx()},
	{Name: "pkt_index", Doc: "the skb's index among its parent's splits (segment or fragment i), 0 for other edges; the UDP port of an encap", Type: types.U16, Needs: NeedSkb, Src: ctx()},
	{Name: "pkt_count", Doc: "how many segments the skb's GSO parent was cut into (segment i of n), 0 for other edges", Type: types.U16, Needs: NeedSkb, Src: ctx()},
	{Name: "pkt_parent", Doc: "the skb the skb was made from (a clone's, a segment's or a fragment's original; merged: the GRO head), 0 for the packet's first skb; the VNI of an encap", Type: types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtHex}, Needs: NeedSkb, Src: ctx()},
	{Name: "reason", Doc: "drop reason (enum skb_drop_reason) on kfree_skb and sk_skb_reason_drop; NOT_SPECIFIED on kernels before 5.17, which give none", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtEnum}, Needs: NeedReason, Src: ctx()},

	{Name: "probe", Doc: "the probe's name as bpftrace prints it: tracepoint:skb:kfree_skb (each tracepoint of a glob its own), kprobe:FUNC where a program traces functions (skb: included: the function the packet is in), kretprobe:FUNC on return probes (skbret: included), tracepoint:CAT:NAME where skb: falls back to tracepoints, BEGIN, interval:s:1; compared only with a string literal", Type: types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtProbe}, Src: ctx()},
	{Name: "func", Doc: "the traced kernel function; in uprobes, the user-space function's name", Type: types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtKsym}, Needs: NeedFunc, Src: ctx()},
	{Name: "cpu", Doc: "the CPU the event ran on", Type: types.U32, Src: ctx()},
	{Name: "pid", Doc: "process id (the kernel's tgid); print() shows the pod or container it runs in: 4242 (default/web-0)", Type: types.Type{Kind: types.Int, Size: 4, Fmt: types.FmtPid}, Src: ctx()},
	{Name: "tid", Doc: "thread id", Type: types.U32, Src: ctx()},
	{Name: "comm", Doc: "name of the current task", Type: types.Str(16), Src: ctx()},
	{Name: "uid", Doc: "user id of the current task", Type: types.U32, Src: ctx()},
	{Name: "gid", Doc: "group id of the current task", Type: types.U32, Src: ctx()},
	{Name: "rand", Doc: "a pseudo-random 32-bit number", Type: types.U32, Src: ctx()},
	{Name: "curtask", Doc: "the current task, a typed pointer: curtask->pid", Type: types.Type{Kind: types.Ptr, Size: 8}, Src: ctx()},
	{Name: "ctx", Doc: "the probe's context, a pointer (bpftrace's ctx): cast it to read it, ((struct pt_regs *)ctx)->ip", Type: types.Type{Kind: types.Ptr, Size: 8}, Src: ctx()},
	{Name: "time", Doc: "when the event happened, printed as the wall-clock time HH:MM:SS", Type: types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtTime}, Src: ctx()},
	{Name: "nsecs", Doc: "monotonic time in nanoseconds", Type: types.U64, Src: ctx()},
	{Name: "elapsed", Doc: "nanoseconds since tracing started", Type: types.U64, Src: ctx()},
	{Name: "kstack", Doc: "the kernel stack", Type: types.Type{Kind: types.Stack}, Src: ctx()},
	{Name: "retval", Doc: "the return value, on kretprobe, uretprobe, fexit and skbret; on bpfret, the program's verdict by name (TC_ACT_SHOT, XDP_DROP, SK_PASS)", Type: types.S64, Needs: NeedRetval, Src: ctx()},
	{Name: "prog", Doc: "the traced BPF program's name, in bpf: and bpfret: probes", Type: types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtProbe}, Needs: NeedProg, Src: ctx()},
	{Name: "prog_id", Doc: "the traced BPF program's id, in bpf: and bpfret: probes", Type: types.U32, Needs: NeedProg, Src: ctx()},
	{Name: "duration", Doc: "nanoseconds since the function's entry, on skbret", Type: types.U64, Needs: NeedEntry, Src: ctx()},
	{Name: "cgroup", Doc: "the cgroup v2 id of the current task (bpf_get_current_cgroup_id)", Type: types.U64, Src: ctx()},
	{Name: "numaid", Doc: "the NUMA node the event ran on", Type: types.U32, Src: ctx()},
	{Name: "jiffies", Doc: "the kernel's jiffies (bpf_jiffies64)", Type: types.U64, Src: ctx()},
	{Name: "usermode", Doc: "1 where the event interrupted user space: begin, end, interval and uprobes; a profile or kprobe event's registers say; 0 elsewhere", Type: types.U8, Src: ctx()},
	{Name: "cpid", Doc: "the process id of -c's command, once it started (0 before, and without -c: begin probes run before it starts)", Type: types.U32, Src: ctx()},
	{Name: "has_cpid", Doc: "whether -c's command has started: cpid is its process id", Type: types.Bool, Src: ctx()},
	{Name: "ncpus", Doc: "the number of possible CPUs, known when the script is compiled", Type: types.U64, Src: ctx()},
	// nsecs(boot), nsecs(tai) and nsecs(sw_tai) are these (lang/builtins.go).
	{Name: NsecsBoot, Doc: "nsecs(boot): nanoseconds since boot, suspended time included (CLOCK_BOOTTIME)", Type: types.U64, Src: ctx()},
	{Name: NsecsTAI, Doc: "nsecs(tai): the TAI clock in nanoseconds (CLOCK_TAI; nsecs(sw_tai) too)", Type: types.U64, Src: ctx()},
	// len(kstack) is this (lang/builtins.go).
	{Name: KstackLen, Doc: "len(kstack): the kernel stack's depth in frames (bpf_get_stack)", Type: types.S64, Src: ctx()},
}

// NsecsBoot and NsecsTAI are the names nsecs(boot) and nsecs(tai) are
// read by.
const (
	NsecsBoot = "__nsecs_boot"
	NsecsTAI  = "__nsecs_tai"
	// KstackLen is the name len(kstack) is read by.
	KstackLen = "__kstack_len"
)

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

// The values of ct_state: nftables' ct state bits.
const (
	CtInvalid     = 1
	CtEstablished = 2
	CtRelated     = 4
	CtNew         = 8
	CtUntracked   = 64
)

func ct(name string, v uint64) *Const {
	return &Const{Name: name, Value: v, Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtCtState}}
}

func hook(name string, v uint64) *Const {
	return &Const{Name: name, Value: v, Type: types.Type{Kind: types.Int, Size: 1, Fmt: types.FmtNfHook}}
}

// NoHook is hook's value outside a netfilter hook.
const NoHook = 0xff

// Consts are the named constants.
var Consts = []*Const{
	l4("icmp", 1), l4("igmp", 2), l4("ipip", 4), l4("tcp", 6), l4("udp", 17), l4("gre", 47),
	l4("esp", 50), l4("ah", 51), l4("icmpv6", 58), l4("sctp", 132), l4("udplite", 136),
	l3("ip", 0x0800), l3("ipv4", 0x0800), l3("arp", 0x0806), l3("dot1q", 0x8100), l3("ipv6", 0x86DD),
	l3("mpls", 0x8847), l3("qinq", 0x88A8),
	flag("FIN", 0x01), flag("SYN", 0x02), flag("RST", 0x04), flag("PSH", 0x08), flag("ACK", 0x10),
	flag("URG", 0x20), flag("ECE", 0x40), flag("CWR", 0x80),
	ct("invalid", CtInvalid), ct("established", CtEstablished), ct("related", CtRelated), ct("new", CtNew), ct("untracked", CtUntracked),
	hook("prerouting", 0), hook("input", 1), hook("forward", 2), hook("output", 3), hook("postrouting", 4), hook("ingress", 5),
	pkt("host", 0), pkt("broadcast", 1), pkt("multicast", 2), pkt("otherhost", 3), pkt("outgoing", 4), pkt("loopback", 5),
	// Address families: #defines of <sys/socket.h>, which BTF does not
	// carry and bpftrace scripts compare skc_family with.
	af("AF_UNSPEC", 0), af("AF_UNIX", 1), af("AF_INET", 2), af("AF_INET6", 10),
	af("AF_NETLINK", 16), af("AF_PACKET", 17),
	// bpftrace's booleans, printed true and false as bpftrace 0.2x prints them.
	{Name: "true", Value: 1, Type: types.Bool}, {Name: "false", Value: 0, Type: types.Bool},
}

func af(name string, v uint64) *Const {
	return &Const{Name: name, Value: v, Type: types.U16}
}

var constIndex = byName(Consts, func(c *Const) string { return c.Name })

// LookupConst finds a named constant.
func LookupConst(name string) *Const {
	if c := constIndex[name]; c != nil {
		return c
	}
	return errnoConsts[name]
}

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
