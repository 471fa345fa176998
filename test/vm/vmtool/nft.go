package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"
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
		msgs = append(msgs, nftMsg(nftDelTable, nlmFAck, nlaStr(nftaTableName, nftTable)))
	case len(args) == 2:
		hook, ok1 := hooks[args[0]]
		policy, ok2 := policies[args[1]]
		if !ok1 || !ok2 {
			return nftUsage()
		}
		msgs = append(msgs,
			nftMsg(nftNewTable, nlmFAck|nlmFCreate, nlaStr(nftaTableName, nftTable)),
			nftMsg(nftNewChain, nlmFAck|nlmFCreate,
				nlaStr(nftaChainTable, nftTable), nlaStr(nftaChainName, "c"),
				nla(nftaChainHook|nlaFNested, append(nlaU32BE(nftaHookHooknum, hook), nlaU32BE(nftaHookPriority, 0)...)),
				nlaU32BE(nftaChainPolicy, policy), nlaStr(nftaChainType, "filter")))
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
	nlmFRequest      = 0x1
	nlmFAck          = 0x4
	nlmFCreate       = 0x400
	nlmsgError       = 2
	nlaFNested       = 0x8000

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

// nla encodes one netlink attribute, padded to 4 bytes.
func nla(typ uint16, data []byte) []byte {
	b := make([]byte, 4, 4+len(data)+3)
	binary.LittleEndian.PutUint16(b, uint16(4+len(data)))
	binary.LittleEndian.PutUint16(b[2:], typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func nlaStr(typ uint16, s string) []byte { return nla(typ, append([]byte(s), 0)) }

func nlaU32BE(typ uint16, v uint32) []byte {
	return nla(typ, binary.BigEndian.AppendUint32(nil, v))
}

// nlMsg is a netlink message: its type, flags, the nfgenmsg's family and
// resource id, and attributes; nftSend numbers it.
func nlMsg(typ, flags uint16, family uint8, resID uint16, attrs ...[]byte) []byte {
	b := make([]byte, 20)
	binary.LittleEndian.PutUint16(b[4:], typ)
	binary.LittleEndian.PutUint16(b[6:], flags|nlmFRequest)
	b[16] = family
	binary.BigEndian.PutUint16(b[18:], resID)
	for _, a := range attrs {
		b = append(b, a...)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

// nftSend sends messages in one batch and waits for each one's ack.
func nftSend(msgs [][]byte) error {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, netlinkNetfilter)
	if err != nil {
		return fmt.Errorf("netlink socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	tv := syscall.Timeval{Sec: 5}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return err
	}
	all := [][]byte{nlMsg(nfnlMsgBatchBegin, 0, 0, nfnlSubsysNftable)}
	all = append(all, msgs...)
	all = append(all, nlMsg(nfnlMsgBatchEnd, 0, 0, nfnlSubsysNftable))
	var batch []byte
	for i, m := range all {
		binary.LittleEndian.PutUint32(m[8:], uint32(i+1))
		batch = append(batch, m...)
	}
	if err := syscall.Sendto(fd, batch, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	buf := make([]byte, 1<<16)
	for acks := 0; acks < len(msgs); {
		n, _, err := syscall.Recvfrom(fd, buf, 0)
		if err != nil {
			return fmt.Errorf("waiting for the kernel's answer: %w", err)
		}
		for b := buf[:n]; len(b) >= 16; {
			l := int(binary.LittleEndian.Uint32(b))
			if l < 16 || l > len(b) {
				return fmt.Errorf("bad netlink answer")
			}
			if binary.LittleEndian.Uint16(b[4:]) == nlmsgError && l >= 20 {
				if e := int32(binary.LittleEndian.Uint32(b[16:])); e != 0 {
					return syscall.Errno(-e)
				}
				acks++
			}
			b = b[(l+3)&^3:]
		}
	}
	return nil
}
