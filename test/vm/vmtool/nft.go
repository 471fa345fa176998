package main

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/skbtrace/skbtrace/test/vm/nl"
)

// nft installs or removes a netfilter hook without the nft binary, which the
// guest does not have: table ip skbtrace_vm with one base chain on a hook
// and a policy, over nfnetlink, as nft itself sends it.
//
//	vmtool nft [FAMILY] HOOK accept|drop   prerouting, input, forward, output, postrouting
//	vmtool nft [FAMILY] delete             remove the table
//
// FAMILY is the table's: ip (the default), ip6 or inet (both). A chain with
// no rules gives every packet its policy: with drop, the kernel's
// nf_hook_slow returns -EPERM for each packet at that hook.
func nft(args []string) int {
	family := uint8(nfprotoIPv4)
	if len(args) > 0 {
		if f, ok := map[string]uint8{"ip": nfprotoIPv4, "ip6": nfprotoIPv6, "inet": nfprotoInet}[args[0]]; ok {
			family, args = f, args[1:]
		}
	}
	nftMsg := func(typ uint16, flags uint16, attrs ...[]byte) []byte {
		return nlMsg(nfnlSubsysNftable<<8|typ, flags, family, 0, attrs...)
	}
	hooks := map[string]uint32{"prerouting": 0, "input": 1, "forward": 2, "output": 3, "postrouting": 4}
	policies := map[string]uint32{"drop": 0, "accept": 1}
	var msgs [][]byte
	switch {
	case len(args) == 1 && args[0] == "delete":
		msgs = append(msgs, nftMsg(nftDelTable, nl.FAck, nl.AttrStr(nftaTableName, nftTable)))
	case len(args) == 2:
		hook, ok1 := hooks[args[0]]
		policy, ok2 := policies[args[1]]
		if !ok1 || !ok2 {
			return nftUsage()
		}
		msgs = append(msgs,
			nftMsg(nftNewTable, nl.FAck|nl.FCreate, nl.AttrStr(nftaTableName, nftTable)),
			nftMsg(nftNewChain, nl.FAck|nl.FCreate,
				nl.AttrStr(nftaChainTable, nftTable), nl.AttrStr(nftaChainName, "c"),
				nl.Attr(nftaChainHook|nl.FNested, append(nlaU32BE(nftaHookHooknum, hook), nlaU32BE(nftaHookPriority, 0)...)),
				nlaU32BE(nftaChainPolicy, policy), nl.AttrStr(nftaChainType, "filter")))
	default:
		return nftUsage()
	}
	if err := nftSend(msgs); err != nil {
		fmt.Fprintf(os.Stderr, "vmtool nft %v: %v\n", args, err)
		return 1
	}
	return 0
}

func nftUsage() int {
	fmt.Fprintln(os.Stderr, "usage: vmtool nft [ip|ip6|inet] prerouting|input|forward|output|postrouting accept|drop | vmtool nft [ip|ip6|inet] delete")
	return 2
}

const nftTable = "skbtrace_vm"

// Netlink and nf_tables constants (linux/netlink.h, linux/netfilter/nfnetlink.h,
// linux/netfilter/nf_tables.h).
const (
	netlinkNetfilter = 12

	nfnlMsgBatchBegin = 0x10
	nfnlMsgBatchEnd   = 0x11
	nfnlSubsysNftable = 10
	nfprotoInet       = 1
	nfprotoIPv4       = 2
	nfprotoIPv6       = 10

	nftNewTable = 0
	nftDelTable = 2
	nftNewChain = 3

	nftaTableName    = 1
	nftaChainTable   = 1
	nftaChainName    = 3
	nftaChainHook    = 4
	nftaChainPolicy  = 5
	nftaChainType    = 7
	nftaHookHooknum  = 1
	nftaHookPriority = 2
)

func nlaU32BE(typ uint16, v uint32) []byte {
	return nl.Attr(typ, binary.BigEndian.AppendUint32(nil, v))
}

// nlMsg is a netlink message: its type, flags, the nfgenmsg's family and
// resource id, and attributes.
func nlMsg(typ, flags uint16, family uint8, resID uint16, attrs ...[]byte) []byte {
	gen := []byte{family, 0, 0, 0}
	binary.BigEndian.PutUint16(gen[2:], resID)
	return nl.Msg(typ, flags, append([][]byte{gen}, attrs...)...)
}

// nftSend sends messages in one batch and waits for each one's ack.
func nftSend(msgs [][]byte) error {
	all := [][]byte{nlMsg(nfnlMsgBatchBegin, 0, 0, nfnlSubsysNftable)}
	all = append(all, msgs...)
	all = append(all, nlMsg(nfnlMsgBatchEnd, 0, 0, nfnlSubsysNftable))
	return nl.Exchange(netlinkNetfilter, all, len(msgs))
}
