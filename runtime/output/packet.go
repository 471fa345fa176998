package output

import (
	"encoding/binary"
	"strconv"

	"github.com/skbtrace/skbtrace/codegen"
)

// pktState is what a timeline block of a logical packet (a tracking
// script's records carry it: codegen.Event.Packet) knows of its skbs: the
// first, which names the block; those alive; the edge each was last seen
// with; and how many skbs each made by splitting (segments, fragments)
// against how many of those have been seen. The block is complete when
// every skb seen is freed and every skb made has been seen (or after
// TimelineQuiet without a hop).
type pktState struct {
	id     uint64
	first  uint64
	alive  map[uint64]bool
	edges  map[uint64]uint64
	made   map[uint64]uint16
	seen   map[uint64]uint16
	freed  bool
	closed bool
}

// edgeNames are the kinds' names in JSON.
var edgeNames = map[uint8]string{
	codegen.EdgeOrigin: "origin", codegen.EdgeClone: "clone", codegen.EdgeCopy: "copy",
	codegen.EdgeSegment: "segment", codegen.EdgeFragment: "fragment", codegen.EdgeReassembled: "reassembled",
	codegen.EdgeMerged: "merged", codegen.EdgeGROHead: "gro_head", codegen.EdgeEncap: "encap",
}

// tunnelName names a UDP tunnel by its destination port: IANA's vxlan and
// geneve ports, and Linux's old vxlan default.
func tunnelName(port uint16) string {
	switch port {
	case 4789, 8472:
		return "vxlan"
	case 6081:
		return "geneve"
	}
	return ""
}

// ipTunnelName names an IP tunnel by its encap edge's count: the outer
// header's protocol, and codegen.TunnelOuter6 where that header is IPv6
// (Linux's ip6tnl modes ip4ip6 and ip6ip6; its gre and ip6gre alike).
func ipTunnelName(count uint16) string {
	outer6 := count&codegen.TunnelOuter6 != 0
	switch count & 0xff {
	case 47:
		return "gre"
	case 4:
		if outer6 {
			return "ip4ip6"
		}
		return "ipip"
	case 41:
		if outer6 {
			return "ip6ip6"
		}
		return "sit"
	case 137:
		if outer6 {
			return "mplsip6"
		}
		return "mplsip"
	}
	return ""
}

// recordPacket returns a record's logical packet, its parent skb and its
// edge word; 0 where the record has none.
func recordPacket(ev *codegen.Event, b []byte) (id, parent, edge uint64) {
	if !ev.Packet || len(b) < codegen.PrintEdge+8 {
		return 0, 0, 0
	}
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	return u(codegen.PrintPacket), u(codegen.PrintParent), u(codegen.PrintEdge)
}

func newPktState(id, skb uint64) *pktState {
	return &pktState{id: id, first: skb, alive: map[uint64]bool{}, edges: map[uint64]uint64{}, made: map[uint64]uint16{}, seen: map[uint64]uint16{}}
}

// hop takes a hop of skb into the state, free where it frees the skb. It
// returns whether the hop shows a new edge: the skb's first hop in the
// block other than the first skb's, or a new kind (reassembled).
func (ps *pktState) hop(skb, parent, edge uint64, free bool) bool {
	e := codegen.DecodeEdge(edge)
	old, known := ps.edges[skb]
	ps.edges[skb] = edge
	if e.Spawned > ps.made[skb] {
		ps.made[skb] = e.Spawned
	}
	if !known && parent != 0 && parent != skb && (e.Kind == codegen.EdgeSegment || e.Kind == codegen.EdgeFragment) {
		ps.seen[parent]++
	}
	if free {
		delete(ps.alive, skb)
		ps.freed = true
	} else {
		ps.alive[skb] = true
	}
	ps.closed = ps.freed && len(ps.alive) == 0 && ps.pending() == 0
	changed := known && uint8(old) != e.Kind && (e.Kind == codegen.EdgeReassembled || e.Kind == codegen.EdgeMerged || e.Kind == codegen.EdgeEncap)
	return skb != ps.first && !known || changed
}

// pending is how many skbs made by splits have not been seen yet.
func (ps *pktState) pending() int {
	n := 0
	for skb, m := range ps.made {
		if d := int(m) - int(ps.seen[skb]); d > 0 {
			n += d
		}
	}
	return n
}

// appendEdgeText appends what made skb: "0xS is segment 2 of 45 of 0xP".
func appendEdgeText(dst []byte, skb, parent, edge uint64) []byte {
	e := codegen.DecodeEdge(edge)
	hex := func(d []byte, v uint64) []byte { return strconv.AppendUint(append(d, "0x"...), v, 16) }
	switch e.Kind {
	case codegen.EdgeReassembled:
		return hex(append(dst, "reassembled as "...), skb)
	case codegen.EdgeSegment:
		dst = strconv.AppendUint(append(hex(dst, skb), " is segment "...), uint64(e.Index), 10)
		dst = strconv.AppendUint(append(dst, " of "...), uint64(e.Count), 10)
		return hex(append(dst, " of "...), parent)
	case codegen.EdgeFragment:
		dst = strconv.AppendUint(append(hex(dst, skb), " is fragment "...), uint64(e.Index), 10)
		return hex(append(dst, " of "...), parent)
	case codegen.EdgeMerged:
		return hex(append(hex(dst, skb), " merged into "...), parent)
	case codegen.EdgeEncap:
		// "0xS encapsulated in vxlan 42": parent is the VNI, index the port;
		// "0xS encapsulated in gre": an IP tunnel, no port.
		dst = append(hex(dst, skb), " encapsulated in "...)
		if e.Index == 0 {
			if name := ipTunnelName(e.Count); name != "" {
				return append(dst, name...)
			}
			return strconv.AppendUint(append(dst, "IP protocol "...), uint64(e.Count&0xff), 10)
		}
		if name := tunnelName(e.Index); name != "" {
			return strconv.AppendUint(append(dst, name+" "...), parent, 10)
		}
		return strconv.AppendUint(append(dst, "UDP port "...), uint64(e.Index), 10)
	case codegen.EdgeGROHead:
		return hex(append(hex(dst, skb), " is the GRO head that took in "...), parent)
	case codegen.EdgeClone, codegen.EdgeCopy:
		return hex(append(append(hex(dst, skb), " is a "...), edgeNames[e.Kind]+" of "...), parent)
	}
	return append(hex(dst, skb), " joins the packet"...)
}

// appendEdgeJSON appends `,"edge":{...}` for a hop that shows a new edge.
func appendEdgeJSON(dst []byte, parent, edge uint64) []byte {
	e := codegen.DecodeEdge(edge)
	dst = append(dst, `,"edge":{`...)
	if e.Kind == codegen.EdgeEncap && e.Index == 0 {
		dst = strconv.AppendUint(append(dst, `"kind":"encap","proto":`...), uint64(e.Count&0xff), 10)
		if name := ipTunnelName(e.Count); name != "" {
			dst = append(dst, `,"tunnel":"`+name+`"`...)
		}
		return append(dst, '}')
	}
	if e.Kind == codegen.EdgeEncap {
		dst = strconv.AppendUint(append(dst, `"kind":"encap","port":`...), uint64(e.Index), 10)
		if name := tunnelName(e.Index); name != "" {
			dst = strconv.AppendUint(append(dst, `,"tunnel":"`+name+`","vni":`...), parent, 10)
		}
		return append(dst, '}')
	}
	if e.Count > 0 {
		dst = strconv.AppendUint(append(dst, `"count":`...), uint64(e.Count), 10)
		dst = append(dst, ',')
	}
	if e.Index > 0 {
		dst = strconv.AppendUint(append(dst, `"index":`...), uint64(e.Index), 10)
		dst = append(dst, ',')
	}
	dst = appendJSONString(append(dst, `"kind":`...), edgeNames[e.Kind])
	if parent != 0 {
		dst = strconv.AppendUint(append(dst, `,"parent":"0x`...), parent, 16)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}
