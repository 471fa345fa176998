package stdlib

import (
	"github.com/skbtrace/skbtrace/lang/pcapfilter"
	"github.com/skbtrace/skbtrace/lang/types"
)

// pcapFuncs are tcpdump's filter, as a function of a predicate, and the
// internal functions a compiled filter calls (their names cannot be
// written in a script).
var pcapFuncs = []*Func{
	{Name: "pcap", Sig: `pcap("filter")`, Doc: "true when the packet matches a tcpdump filter (pcap-filter(7))", Needs: NeedSkb,
		// The checker compiles the filter (check/pcap.go); this only types it.
		Infer: func(c Call) types.Type { return types.Bool }},
	{Name: "capture", Sig: "capture()", Doc: "writes the packet as a frame of the -w pcapng file", Stmt: true, Needs: NeedSkb,
		Infer: func(c Call) types.Type {
			arity(c, "capture()", 0, 0)
			return types.None
		}},
	{Name: pcapfilter.LoadFunc, Sig: "pcap.load(offset, size)", Doc: "bytes of the packet from its link header", Needs: NeedSkb, Internal: true,
		Infer: func(c Call) types.Type { return types.U32 }},
	{Name: pcapfilter.LenFunc, Sig: "pcap.len()", Doc: "the packet's length from its link header", Needs: NeedSkb, Internal: true,
		Infer: func(c Call) types.Type { return types.U32 }},
	{Name: pcapfilter.DirFunc, Sig: "pcap.outbound()", Doc: "whether the packet's link header is yet to be built or pulled: it is being sent", Needs: NeedSkb, Internal: true,
		Infer: func(c Call) types.Type { return types.U32 }},
	{Name: pcapfilter.OffsetFunc, Sig: "pcap.offset(slot)", Doc: "where a tunnel's inner packet is: the offset a vxlan or geneve primitive stored", Needs: NeedSkb, Internal: true,
		Infer: func(c Call) types.Type { return types.U32 }},
	{Name: pcapfilter.SetOffsetFunc, Sig: "pcap.setoffset(slot, offset)", Doc: "stores where a tunnel's inner packet is; its value is 1", Needs: NeedSkb, Internal: true,
		Infer: func(c Call) types.Type { return types.U32 }},
}
