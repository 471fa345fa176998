package rules

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Attributes of tc's actions and their statistics (pkt_cls.h, gen_stats.h,
// tc_act/*.h), named as there.
const (
	tcaActKind    = 1
	tcaActOptions = 2
	tcaActStats   = 4

	tcaStatsBasic = 1 // struct gnet_stats_basic: bytes (u64), packets (u32)
	tcaStatsQueue = 3 // struct gnet_stats_queue: qlen, backlog, drops, requeues, overlimits
	tcaStatsPkt64 = 8

	tcaPoliceTbf    = 1 // struct tc_police
	tcaPoliceTm     = 6
	tcaPoliceRate64 = 8

	tcActShot      = 2
	tcActExtShift  = 28
	tcActJump      = 1 << tcActExtShift
	tcActGotoChain = 2 << tcActExtShift

	tcaEgressRedir  = 1 // struct tc_mirred's eaction
	tcaEgressMirror = 2
	tcaIngressRedir = 3
	tcaIngressMirr  = 4

	pschedShift = 6 // a police burst's ticks are 64 ns each (PSCHED_SHIFT)
)

// tcActsAttr is, for each classifier, the attribute of its options that
// lists its actions (TCA_U32_ACT, TCA_FLOWER_ACT, ...).
var tcActsAttr = map[string]uint16{
	"u32": 7, "flower": 3, "matchall": 2, "basic": 3, "bpf": 1,
	"fw": 4, "route": 6, "flow": 9, "cgroup": 1,
}

// tcParmsAttr is, for each action kind whose parameters start with struct
// tc_gen, the attribute that holds them: its control action (the verdict
// the action gives) is at offset 8.
var tcParmsAttr = map[string]uint16{
	"gact": 2, "mirred": 2, "skbedit": 2, "pedit": 2, "vlan": 2, "csum": 1,
	"nat": 1, "tunnel_key": 2, "skbmod": 2, "connmark": 1, "ct": 1,
	"sample": 2, "mpls": 2, "simple": 2, "ife": 1, "bpf": 2,
}

// readTC reads, in the network namespace at nsPath, the actions of the
// filters on both hooks of dev, or of every device with a clsact or
// ingress qdisc where dev is "", over rtnetlink (no tc binary).
func readTC(nsPath, dev string) ([]tcAction, error) {
	var acts []tcAction
	err := inNetns(nsPath, func() error {
		s, err := openRoute()
		if err != nil {
			return err
		}
		defer s.close()
		names, err := s.links()
		if err != nil {
			return err
		}
		qdiscs, err := s.hookQdiscs()
		if err != nil {
			return err
		}
		idxs := make([]int32, 0, len(qdiscs))
		for idx := range qdiscs {
			if dev == "" || names[idx].name == dev {
				idxs = append(idxs, idx)
			}
		}
		sort.Slice(idxs, func(i, j int) bool { return idxs[i] < idxs[j] })
		for _, idx := range idxs {
			for _, hook := range []string{"ingress", "egress"} {
				parent := uint32(tcHIngress)
				if hook == "egress" {
					if qdiscs[idx] != "clsact" {
						continue
					}
					parent = tcHEgress
				}
				msgs, err := s.dumpRoute(unix.RTM_GETTFILTER, tcmsgOf(idx, 0, parent, 0))
				if err != nil {
					return fmt.Errorf("filters of %s %s: %w", names[idx].name, hook, err)
				}
				for _, m := range msgs {
					if m.typ == unix.RTM_NEWTFILTER {
						acts = append(acts, parseTCFilter(m.body, names[idx].name, hook, qdiscs[idx], names, time.Now())...)
					}
				}
			}
		}
		return nil
	})
	return acts, err
}

// parseTCFilter reads one filter's message (struct tcmsg and its
// attributes): its actions, each with its filter's protocol, pref, kind,
// chain and handle, what it does, how many packets it dropped, and when it
// was first and last used (the kernel says how long ago; now is the
// read's time). names are the namespace's devices, for a mirred action's
// target.
func parseTCFilter(body []byte, dev, hook, qdisc string, names map[int32]netDev, now time.Time) []tcAction {
	if len(body) < tcmsgLen {
		return nil
	}
	handle := binary.LittleEndian.Uint32(body[8:])
	info := binary.LittleEndian.Uint32(body[16:])
	at := attrs(body[tcmsgLen:])
	kind := cstr(at[tcaKind])
	chain := 0
	if c := at[tcaChain]; len(c) >= 4 {
		chain = int(binary.LittleEndian.Uint32(c))
	}
	actsAttr, ok := tcActsAttr[kind]
	if !ok {
		return nil
	}
	list := attrs(at[tcaOptions])[actsAttr]
	if list == nil {
		return nil
	}
	f := tcAction{dev: dev, hook: hook, qdisc: qdisc, kind: kind, chain: chain,
		pref: int(info >> 16), protocol: ethProto(uint16(info)), handle: tcHandle(kind, handle)}
	var acts []tcAction
	for _, a := range attrList(list) {
		t := f
		t.order = int(a.typ)
		t.action, t.drops = readAction(a.data, names)
		t.first, t.last = actionUse(a.data, now)
		t.key = fmt.Sprintf("%s/%s/%d/%d/%s/%s/%d/%s", dev, hook, t.pref, chain, kind, t.handle, t.order, cstr(attrs(a.data)[tcaActKind]))
		acts = append(acts, t)
	}
	return acts
}

// readAction reads one action's attributes: what it does, as tc prints
// it, and how many packets it dropped: gact's and police's drop counters,
// which they count themselves; a mirred redirect's overlimits too (a
// target that is down: the packet is dropped; one that is gone, to_dev *,
// takes it, dropping nothing); the packets of any other action whose
// verdict is drop. A mirred target that is down (or has no carrier) when
// it is read is said so.
func readAction(b []byte, names map[int32]netDev) (string, uint64) {
	at := attrs(b)
	kind := cstr(at[tcaActKind])
	opts := attrs(at[tcaActOptions])
	st := attrs(at[tcaActStats])
	var packets, drops, overlimits uint64
	if q := st[tcaStatsQueue]; len(q) >= 20 {
		drops = uint64(binary.LittleEndian.Uint32(q[8:]))
		overlimits = uint64(binary.LittleEndian.Uint32(q[16:]))
	}
	if p := st[tcaStatsBasic]; len(p) >= 12 {
		packets = uint64(binary.LittleEndian.Uint32(p[8:]))
	}
	if p := st[tcaStatsPkt64]; len(p) >= 8 {
		packets = binary.LittleEndian.Uint64(p)
	}
	if kind == "police" {
		return describePolice(opts), drops
	}
	ctl, hasCtl := int32(0), false
	if n, ok := tcParmsAttr[kind]; ok && len(opts[n]) >= 12 {
		ctl, hasCtl = int32(binary.LittleEndian.Uint32(opts[n][8:])), true
	}
	switch kind {
	case "gact":
		return "gact " + tcControl(ctl), drops
	case "mirred":
		p := opts[tcParmsAttr["mirred"]]
		if len(p) < 28 {
			return "mirred", drops
		}
		eaction := int32(binary.LittleEndian.Uint32(p[20:]))
		ifindex := int32(binary.LittleEndian.Uint32(p[24:]))
		to := names[ifindex]
		if ifindex == 0 || to.name == "" {
			to.name, to.up = "*", true
		}
		dir, what := "egress", "redirect"
		switch eaction {
		case tcaEgressMirror:
			what = "mirror"
		case tcaIngressRedir:
			dir = "ingress"
		case tcaIngressMirr:
			dir, what = "ingress", "mirror"
		}
		text := fmt.Sprintf("mirred (%s %s to device %s) %s", dir, what, to.name, tcControl(ctl))
		if !to.up {
			text += "; " + to.name + " is down"
		}
		switch {
		case ctl == tcActShot:
			return text, packets
		case what == "redirect" && ifindex != 0:
			return text, drops + overlimits
		}
		return text, drops
	}
	if hasCtl {
		if ctl == tcActShot {
			return kind + " " + tcControl(ctl), packets
		}
		return kind + " " + tcControl(ctl), drops
	}
	return kind, drops
}

// actionUse is when an action was first and last used: struct tcf_t of
// its options (TCA_GACT_TM, ...), ages in USER_HZ ticks (10 ms) before the
// dump; zero times where it has none.
func actionUse(b []byte, now time.Time) (first, last time.Time) {
	at := attrs(b)
	kind := cstr(at[tcaActKind])
	tmAttr := uint16(1) // TCA_*_TM: 1 where the parameters are 2
	switch {
	case kind == "police":
		tmAttr = tcaPoliceTm
	case tcParmsAttr[kind] == 1:
		tmAttr = 2
	case tcParmsAttr[kind] == 0:
		return
	}
	tm := attrs(at[tcaActOptions])[tmAttr]
	if len(tm) < 32 {
		return
	}
	tick := func(off int) time.Time {
		return now.Add(-time.Duration(binary.LittleEndian.Uint64(tm[off:])) * 10 * time.Millisecond)
	}
	// firstuse 0: never used, or less than a tick ago (an action with
	// drops to name has been used: now).
	return tick(24), tick(8)
}

// describePolice is a police action as tc prints its first line,
// shortened: police rate 8Kbit burst 1Kb drop (what it does over the
// limit).
func describePolice(opts map[uint16][]byte) string {
	p := opts[tcaPoliceTbf]
	if len(p) < 32 {
		return "police"
	}
	ctl := int32(binary.LittleEndian.Uint32(p[4:]))
	ticks := uint64(binary.LittleEndian.Uint32(p[12:]))
	rate := uint64(binary.LittleEndian.Uint32(p[28:]))
	if r := opts[tcaPoliceRate64]; len(r) >= 8 {
		rate = binary.LittleEndian.Uint64(r)
	}
	if rate == 0 {
		return "police " + tcControl(ctl)
	}
	burst := rate * (ticks << pschedShift) / 1e9
	return fmt.Sprintf("police rate %s burst %s %s", tcRate(rate), tcSize(uint32(burst)), tcControl(ctl))
}

// tcControl names a control action as tc does (action_n2a).
func tcControl(c int32) string {
	switch {
	case c&^(1<<tcActExtShift-1) == tcActGotoChain:
		return "goto chain " + strconv.Itoa(int(c&(1<<tcActExtShift-1)))
	case c&^(1<<tcActExtShift-1) == tcActJump:
		return "jump " + strconv.Itoa(int(c&(1<<tcActExtShift-1)))
	}
	switch c {
	case -1:
		return "continue"
	case 0:
		return "pass"
	case 1:
		return "reclassify"
	case tcActShot:
		return "drop"
	case 3:
		return "pipe"
	case 4:
		return "stolen"
	case 8:
		return "trap"
	}
	return strconv.Itoa(int(c))
}

// tcHandle is a filter's handle as tc prints it: u32's
// htid:hash:node (800::800), the others' in hex.
func tcHandle(kind string, h uint32) string {
	if kind != "u32" {
		return "0x" + strconv.FormatUint(uint64(h), 16)
	}
	s := ""
	if htid := h >> 20; htid != 0 {
		s += strconv.FormatUint(uint64(htid), 16) + ":"
	}
	if hash := h >> 12 & 0xff; hash != 0 {
		s += strconv.FormatUint(uint64(hash), 16)
	}
	if node := h & 0xfff; node != 0 {
		s += ":" + strconv.FormatUint(uint64(node), 16)
	}
	return s
}

// ethProto is a filter's protocol (tcm_info's low half, network order)
// as tc names it.
func ethProto(p uint16) string {
	switch p = p>>8 | p<<8; p {
	case unix.ETH_P_ALL:
		return "all"
	case unix.ETH_P_IP:
		return "ip"
	case unix.ETH_P_IPV6:
		return "ipv6"
	case unix.ETH_P_ARP:
		return "arp"
	case unix.ETH_P_8021Q:
		return "802.1Q"
	case unix.ETH_P_8021AD:
		return "802.1ad"
	}
	return fmt.Sprintf("0x%04x", p)
}

// tcRate is a rate in bytes a second as tc prints it (print_rate): bits,
// in the largest unit of 1000 that divides it (or that it is a thousand
// of at least).
func tcRate(bytes uint64) string {
	r := bytes * 8
	units := []string{"", "K", "M", "G", "T"}
	i := 0
	for ; i < len(units)-1; i++ {
		if r < 1000 || r%1000 != 0 && r < 1000*1000 {
			break
		}
		r /= 1000
	}
	return strconv.FormatUint(r, 10) + units[i] + "bit"
}

// tcSize is a size in bytes as tc prints it (print_size).
func tcSize(sz uint32) string {
	f := float64(sz)
	switch {
	case sz >= 1<<20 && math.Abs(1<<20*math.RoundToEven(f/(1<<20))-f) < 1024:
		return strconv.FormatFloat(math.RoundToEven(f/(1<<20)), 'g', -1, 64) + "Mb"
	case sz >= 1<<10 && math.Abs(1<<10*math.RoundToEven(f/(1<<10))-f) < 16:
		return strconv.FormatFloat(math.RoundToEven(f/(1<<10)), 'g', -1, 64) + "Kb"
	}
	return strconv.FormatUint(uint64(sz), 10) + "b"
}

// attrItem is one attribute of a list whose types are its items' order
// (a filter's actions: 1, 2, ...).
type attrItem struct {
	typ  uint16
	data []byte
}

// attrList splits a run of attributes in their order, nesting flags
// cleared.
func attrList(b []byte) []attrItem {
	var out []attrItem
	for len(b) >= 4 {
		n := int(binary.LittleEndian.Uint16(b))
		if n < 4 || n > len(b) {
			break
		}
		out = append(out, attrItem{binary.LittleEndian.Uint16(b[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER), b[4:n]})
		b = b[min((n+3)&^3, len(b)):]
	}
	return out
}
