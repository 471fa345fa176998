package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"

	"github.com/skbtrace/skbtrace/test/vm/nl"
)

// tc makes classic tc filters and actions over rtnetlink, as iproute2's
// tc sends them: the guest has no tc binary. A clsact qdisc on DEV (made
// where there is none), and on its HOOK a filter of priority PREF for UDP
// to PORT (flower, u32) or for every packet (matchall), with one action:
// gact drop, police (RATE bytes a second, a bucket of BURST bytes, drop
// over it) or a mirred redirect to TARGET's egress.
//
//	vmtool tc add DEV ingress|egress PREF flower|u32 PORT drop|police RATE BURST|mirred TARGET
//	vmtool tc add DEV ingress|egress PREF matchall drop|police RATE BURST|mirred TARGET
//	vmtool tc clear DEV      the clsact qdisc gone, its filters with it
func tc(args []string) int {
	if len(args) == 2 && args[0] == "clear" {
		ifi, err := net.InterfaceByName(args[1])
		if err != nil {
			fmt.Fprintf(os.Stderr, "vmtool tc clear: %v\n", err)
			return 1
		}
		if err := rtnlSend(rtmDelQdisc, 0, tcQdiscMsg(ifi.Index)); err != nil {
			fmt.Fprintf(os.Stderr, "vmtool tc clear %s: %v\n", args[1], err)
			return 1
		}
		return 0
	}
	if len(args) < 6 || args[0] != "add" {
		return tcUsage()
	}
	dev, hook, kind := args[1], args[2], args[4]
	pref, err := strconv.ParseUint(args[3], 10, 16)
	if err != nil || pref == 0 || (hook != "ingress" && hook != "egress") {
		return tcUsage()
	}
	rest := args[5:]
	port := uint64(0)
	if kind != "matchall" {
		if port, err = strconv.ParseUint(rest[0], 10, 16); err != nil || len(rest) < 2 {
			return tcUsage()
		}
		rest = rest[1:]
	}
	act, err := tcActionAttr(rest)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtool tc: %v\n", err)
		return tcUsage()
	}
	opts, err := tcFilterOpts(kind, uint16(port), nl.Attr(1|nl.FNested, act))
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtool tc: %v\n", err)
		return tcUsage()
	}
	ifi, err := net.InterfaceByName(dev)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtool tc add: %v\n", err)
		return 1
	}
	if err := rtnlSend(rtmNewQdisc, nl.FCreate|nl.FExcl, tcQdiscMsg(ifi.Index)); err != nil && err != syscall.EEXIST {
		fmt.Fprintf(os.Stderr, "vmtool tc add: clsact on %s: %v\n", dev, err)
		return 1
	}
	parent := uint32(tcHIngress)
	if hook == "egress" {
		parent = tcHEgress
	}
	// tcm_info: the priority, and the protocol in network order (ETH_P_IP).
	msg := tcmsg(ifi.Index, 0, parent, uint32(pref)<<16|0x0008)
	msg = append(msg, nl.AttrStr(tcaKind, kind)...)
	msg = append(msg, nl.Attr(tcaOptions|nl.FNested, opts)...)
	if err := rtnlSend(rtmNewTfilter, nl.FCreate|nl.FExcl, msg); err != nil {
		fmt.Fprintf(os.Stderr, "vmtool tc add %s %s %d %s: %v\n", dev, hook, pref, kind, err)
		return 1
	}
	return 0
}

func tcUsage() int {
	fmt.Fprintln(os.Stderr, "usage: vmtool tc add DEV ingress|egress PREF flower|u32 PORT ACTION | vmtool tc add DEV ingress|egress PREF matchall ACTION | vmtool tc clear DEV; ACTION: drop, police RATE BURST, mirred TARGET")
	return 2
}

// Rtnetlink's tc constants (linux/rtnetlink.h, pkt_sched.h, pkt_cls.h,
// tc_act/*.h).
const (
	rtmNewQdisc   = 36
	rtmDelQdisc   = 37
	rtmNewTfilter = 44
	tcaKind       = 1
	tcaOptions    = 2
	tcHClsact     = 0xffff0000
	tcHClsactPar  = 0xfffffff1 // TC_H_CLSACT: the qdisc's parent
	tcHIngress    = 0xfffffff2
	tcHEgress     = 0xfffffff3

	tcaU32Sel        = 5
	tcaU32Act        = 7
	tcU32Terminal    = 1
	tcaFlowerAct     = 3
	tcaFlowerEthType = 8
	tcaFlowerIPProto = 9
	tcaFlowerUDPDst  = 21
	tcaMatchallAct   = 2

	tcaActKind     = 1
	tcaActOptions  = 2
	tcaGactParms   = 2
	tcaMirredParms = 2
	tcaPoliceTbf   = 1
	tcaPoliceRate  = 2
	tcActShot      = 2
	tcActStolen    = 4
	tcaEgressRedir = 1
	tcRtabSize     = 1024
	pschedShift    = 6 // a burst is in ticks of 64 ns (PSCHED_SHIFT)
)

// tcmsg is a struct tcmsg: family, ifindex, handle, parent, info.
func tcmsg(ifindex int, handle, parent, info uint32) []byte {
	b := make([]byte, 20)
	binary.LittleEndian.PutUint32(b[4:], uint32(ifindex))
	binary.LittleEndian.PutUint32(b[8:], handle)
	binary.LittleEndian.PutUint32(b[12:], parent)
	binary.LittleEndian.PutUint32(b[16:], info)
	return b
}

// tcQdiscMsg is a clsact qdisc on a device.
func tcQdiscMsg(ifindex int) []byte {
	return append(tcmsg(ifindex, tcHClsact, tcHClsactPar, 0), nl.AttrStr(tcaKind, "clsact")...)
}

// tcFilterOpts is a filter's TCA_OPTIONS: UDP to port (flower, u32) or
// every packet (matchall), and its list of actions.
func tcFilterOpts(kind string, port uint16, acts []byte) ([]byte, error) {
	be16 := func(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
	switch kind {
	case "flower":
		b := nl.Attr(tcaFlowerEthType, be16(syscall.ETH_P_IP))
		b = append(b, nl.Attr(tcaFlowerIPProto, []byte{syscall.IPPROTO_UDP})...)
		b = append(b, nl.Attr(tcaFlowerUDPDst, be16(port))...)
		return append(b, nl.Attr(tcaFlowerAct|nl.FNested, acts)...), nil
	case "u32":
		// As tc's "match ip protocol 17 0xff match ip dport PORT 0xffff":
		// the IP header's byte 9, and the 16 bits at 22 (no IP options).
		sel := make([]byte, 16)
		sel[0], sel[2] = tcU32Terminal, 2
		key := func(mask, val uint32, off int32) []byte {
			k := binary.BigEndian.AppendUint32(nil, mask)
			k = binary.BigEndian.AppendUint32(k, val)
			k = binary.LittleEndian.AppendUint32(k, uint32(off))
			return binary.LittleEndian.AppendUint32(k, 0)
		}
		sel = append(sel, key(0x00ff0000, syscall.IPPROTO_UDP<<16, 8)...)
		sel = append(sel, key(0x0000ffff, uint32(port), 20)...)
		return append(nl.Attr(tcaU32Sel, sel), nl.Attr(tcaU32Act|nl.FNested, acts)...), nil
	case "matchall":
		return nl.Attr(tcaMatchallAct|nl.FNested, acts), nil
	}
	return nil, fmt.Errorf("filter kind %q: flower, u32 or matchall", kind)
}

// tcActionAttr is one action's attributes: drop (gact), police RATE
// BURST, mirred TARGET.
func tcActionAttr(args []string) ([]byte, error) {
	gen := func(ctl uint32, extra ...uint32) []byte { // struct tc_gen, then extra
		b := make([]byte, 20)
		binary.LittleEndian.PutUint32(b[8:], ctl)
		for _, v := range extra {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		return b
	}
	action := func(kind string, opts []byte) []byte {
		return append(nl.AttrStr(tcaActKind, kind), nl.Attr(tcaActOptions|nl.FNested, opts)...)
	}
	switch {
	case len(args) == 1 && args[0] == "drop":
		return action("gact", nl.Attr(tcaGactParms, gen(tcActShot))), nil
	case len(args) == 2 && args[0] == "mirred":
		ifi, err := net.InterfaceByName(args[1])
		if err != nil {
			return nil, err
		}
		return action("mirred", nl.Attr(tcaMirredParms, gen(tcActStolen, tcaEgressRedir, uint32(ifi.Index)))), nil
	case len(args) == 3 && args[0] == "police":
		rate, err1 := strconv.ParseUint(args[1], 10, 32)
		burst, err2 := strconv.ParseUint(args[2], 10, 32)
		if err1 != nil || err2 != nil || rate == 0 {
			return nil, fmt.Errorf("police %s %s: RATE (bytes a second) and BURST (bytes)", args[1], args[2])
		}
		// struct tc_police: index, action (over the limit), limit, burst
		// (in ticks: the time the bucket takes to fill at the rate), mtu,
		// rate (a tc_ratespec: cell_log 3, as tc's for an MTU of 2047),
		// peakrate, refcnt, bindcnt, capab. The kernel wants a rate table
		// beside it, whose values it no longer reads.
		p := make([]byte, 56)
		binary.LittleEndian.PutUint32(p[4:], tcActShot)
		binary.LittleEndian.PutUint32(p[12:], uint32(burst*1e9/rate>>pschedShift))
		p[20] = 3
		binary.LittleEndian.PutUint32(p[28:], uint32(rate))
		opts := append(nl.Attr(tcaPoliceTbf, p), nl.Attr(tcaPoliceRate, make([]byte, tcRtabSize))...)
		return action("police", opts), nil
	}
	return nil, fmt.Errorf("action %q: drop, police RATE BURST or mirred TARGET", args)
}
