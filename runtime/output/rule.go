package output

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/rules"
)

// SetRules gives the namer that rule() values ask which rule or action
// dropped a packet; nil (the default) prints what the kernel's structures
// said (the hook, table and base chain) alone.
func (f *Values) SetRules(n *rules.Namer) { f.rules = n }


// appendRule appends rule()'s lines for a drop, each starting "  " and
// ending in a newline, as whydrop prints them:
//
//	rule   hook input, table filter, chain INPUT         (the kernel's structures, for NETFILTER_DROP)
//	nft    table inet web, chain deny, handle 4: udp dport 7777 counter packets 1 bytes 29 drop comment "no" # handle 4
//	ipt    table filter, chain INPUT, rule 2: -A INPUT -p udp -m udp --dport 7777 -m comment --comment no -j DROP
//	tc     dev v2 ingress (clsact), filter protocol ip pref 10 u32 chain 0 handle 800::800, action order 1: mirred (egress redirect to device x) stolen
//	object service default/web:http (kube-proxy)
//	which  what could not be told, and why
//
// Nothing for a reason that no rule or action gives.
func (f *Values) appendRule(dst []byte, t types.Type, raw []byte) []byte {
	d, nf := f.ruleDrop(t, raw)
	if nf {
		dst = append(dst, "  rule   hook "...)
		dst = append(dst, d.Hook...)
		dst = append(dst, ", table "...)
		dst = append(dst, d.Table...)
		dst = append(dst, ", chain "...)
		dst = append(dst, d.Chain...)
		dst = append(dst, '\n')
	}
	if f.rules == nil {
		return dst
	}
	v := f.rules.Name(d)
	switch v.Kind {
	case "nftables":
		dst = append(dst, "  nft    table "...)
		dst = append(dst, v.Family...)
		dst = append(dst, ' ')
		dst = append(dst, v.Table...)
		dst = append(dst, ", chain "...)
		dst = append(dst, v.Chain...)
		if v.Policy {
			dst = append(dst, ", its policy drop"...)
		} else {
			dst = append(dst, ", handle "...)
			dst = strconv.AppendUint(dst, v.Handle, 10)
			if v.Text != "" {
				dst = append(dst, ": "...)
				dst = append(dst, v.Text...)
			}
		}
	case "iptables-legacy":
		dst = append(dst, "  ipt    table "...)
		dst = append(dst, v.Table...)
		dst = append(dst, ", chain "...)
		dst = append(dst, v.Chain...)
		if v.Policy {
			dst = append(dst, ", its policy: "...)
		} else {
			dst = append(dst, ", rule "...)
			dst = strconv.AppendInt(dst, int64(v.Number), 10)
			dst = append(dst, ": "...)
		}
		dst = append(dst, v.Text...)
	case "tc":
		dst = append(dst, "  tc     dev "...)
		dst = append(dst, v.Dev...)
		dst = append(dst, ' ')
		dst = append(dst, v.Hook...)
		dst = append(dst, " ("...)
		dst = append(dst, v.Qdisc...)
		dst = append(dst, "), "...)
		dst = append(dst, v.Text...)
	}
	if v.Kind != "" {
		dst = append(dst, '\n')
	}
	if v.Object != nil {
		dst = append(dst, "  object "...)
		dst = append(dst, v.Object.String()...)
		dst = append(dst, '\n')
	}
	if v.Note != "" {
		dst = append(dst, "  which  "...)
		dst = append(dst, v.Note...)
		dst = append(dst, '\n')
	}
	return dst
}

// ruleDrop reads rule()'s record: its elements by name, the packet from
// its network header. nf is whether netfilter dropped it (the rule line
// of the kernel's structures is printed).
func (f *Values) ruleDrop(t types.Type, raw []byte) (d rules.Drop, nf bool) {
	for i, p := range codegen.TupleLayout(t) {
		b := raw[p.Offset : p.Offset+p.Size]
		switch t.Tuple.Names[i] {
		case "reason":
			d.Reason = f.value(p.Type, b)
		case "netns":
			d.Netns = binary.LittleEndian.Uint64(b) & 0xffffffff
		case "dev":
			d.Dev = cString(b)
		case "hook":
			d.Hook = f.value(p.Type, b)
		case "table":
			d.Table = cString(b)
		case "chain":
			d.Chain = cString(b)
		case "pkt":
			d.L3 = packetL3(b)
		}
	}
	return d, d.Reason == "NETFILTER_DROP"
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.Clone(string(b))
}

// packetL3 is a pkt value's packet from its IP header (VLAN tags
// skipped); nil where it is no IP packet.
func packetL3(raw []byte) []byte {
	if len(raw) < codegen.PacketData {
		return nil
	}
	le := binary.LittleEndian
	n := min(int(le.Uint32(raw[codegen.PacketLen:])), codegen.PacketBytes, len(raw)-codegen.PacketData)
	b := raw[codegen.PacketData : codegen.PacketData+n]
	if len(b) < 14 {
		return nil
	}
	typ, off := binary.BigEndian.Uint16(b[12:]), 14
	if synth := le.Uint32(raw[codegen.PacketSynth:]); synth != 0 {
		typ = uint16(synth)
	}
	for (typ == 0x8100 || typ == 0x88a8) && off+4 <= len(b) {
		typ, off = binary.BigEndian.Uint16(b[off+2:]), off+4
	}
	if typ != 0x0800 && typ != 0x86dd {
		return nil
	}
	return b[off:]
}
