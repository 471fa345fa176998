package stdlib

import "github.com/cilium/ebpf/btf"

// PacketEdgeEnum names how an skb joined its logical packet (codegen's
// Edge* kinds, the same numbers): pkt_edge's type, compared with a name
// (pkt_edge == "segment") and printed as one. none: the skb is not
// followed (the script does not call track(), or not on it).
var PacketEdgeEnum = &btf.Enum{Name: "packet_edge", Size: 1, Values: []btf.EnumValue{
	{Name: "none", Value: 0}, {Name: "origin", Value: 1}, {Name: "clone", Value: 2},
	{Name: "copy", Value: 3}, {Name: "segment", Value: 4}, {Name: "fragment", Value: 5},
	{Name: "reassembled", Value: 6}, {Name: "merged", Value: 7}, {Name: "gro_head", Value: 8},
	{Name: "encap", Value: 9},
}}
