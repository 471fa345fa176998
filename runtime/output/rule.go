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
func (f *Values) SetRules(n *rules.Namer) {
	f.rules = n
	f.ruleKeys = newRuleLabels(MaxRuleLabels)
}

// appendRule appends rule()'s lines for a drop, each starting "  " and
// ending in a newline, as whydrop prints them:
//
//	nft    table inet web, chain deny, handle 4: udp dport 7777 counter packets 1 bytes 29 drop comment "no" # handle 4
//	ipt    table filter, chain INPUT, rule 2 (iptables-legacy): -A INPUT -p udp -m udp --dport 7777 -m comment --comment no -j DROP
//	tc     dev v2 ingress (clsact), filter protocol ip pref 10 u32 chain 0 handle 800::800, action order 1: mirred (egress redirect to device x) stolen
//	object service default/web:http (kube-proxy)
//	which  what could not be told, and why
//
// Nothing for a reason that no rule or action gives.
func (f *Values) appendRule(dst []byte, t types.Type, raw []byte) []byte {
	d := f.ruleDrop(t, raw)
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
		if v.IptText != "" {
			dst = appendIpt(append(dst, '\n'), "iptables-nft", v.Table, v.Chain, v.Number, v.IptText)
		}
	case "iptables-legacy":
		if v.Policy {
			dst = append(dst, "  ipt    table "...)
			dst = append(dst, v.Table...)
			dst = append(dst, ", chain "...)
			dst = append(dst, v.Chain...)
			dst = append(dst, ", its policy (iptables-legacy): "...)
			dst = append(dst, v.Text...)
		} else {
			dst = appendIpt(dst, "iptables-legacy", v.Table, v.Chain, v.Number, v.Text)
		}
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

// appendIpt appends an iptables rule's line: table, chain, its number and
// text, and which iptables has it.
func appendIpt(dst []byte, which, table, chain string, number int, text string) []byte {
	dst = append(dst, "  ipt    table "...)
	dst = append(dst, table...)
	dst = append(dst, ", chain "...)
	dst = append(dst, chain...)
	dst = append(dst, ", rule "...)
	dst = strconv.AppendInt(dst, int64(number), 10)
	dst = append(dst, " ("...)
	dst = append(dst, which...)
	dst = append(dst, "): "...)
	return append(dst, text...)
}

// ruleDrop reads rule()'s record: its elements by name.
func (f *Values) ruleDrop(t types.Type, raw []byte) (d rules.Drop) {
	for i, p := range codegen.TupleLayout(t) {
		b := raw[p.Offset : p.Offset+p.Size]
		v := binary.LittleEndian.Uint64(b)
		switch t.Tuple.Names[i] {
		case "reason":
			d.Reason = f.value(p.Type, b)
		case "netns":
			d.Netns = v & 0xffffffff
		case "dev":
			d.Dev = cString(b)
		case "l4proto":
			d.L4 = uint8(v)
		case "saddr":
			d.Saddr, _ = addrOf(b)
		case "daddr":
			d.Daddr, _ = addrOf(b)
		case "sport":
			d.Sport = uint16(v)
		case "dport":
			d.Dport = uint16(v)
		}
	}
	return d
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.Clone(string(b))
}
