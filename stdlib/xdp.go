package stdlib

import "github.com/skbtrace/skbtrace/lang/types"

// XdpFields are the skb fields that bpf:xdp and bpfret:xdp probes read
// from the frame instead, before the kernel makes an skb of it: the
// program's context is the kernel's struct xdp_buff. The others (addresses,
// ports) are errors there that say how to read the frame.
// pcap() reads the frame too (check's xdpFrameFuncs).
var XdpFields = map[string]*Field{
	"len":     {Name: "len", Doc: "bytes of the frame, xdp->data_end - xdp->data (its link header included)", Type: types.U32, Src: ctx()},
	"dev":     {Name: "dev", Doc: "name of the receiving device, xdp->rxq->dev->name", Type: types.Str(16), Src: on(BaseXdp, "rxq", "dev", "name")},
	"ifindex": {Name: "ifindex", Doc: "xdp->rxq->dev->ifindex", Type: types.S32, Src: on(BaseXdp, "rxq", "dev", "ifindex")},
	"pkt":     {Name: "pkt", Doc: "the frame's headers, from xdp->data, printed as tcpdump prints them", Type: types.Type{Kind: types.Packet, Size: 136}, Src: ctx()},
}
