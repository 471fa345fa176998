package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
)

// link makes the network devices busybox's ip cannot: a veth pair whose
// peer is in another network namespace (a file, as `unshare --net=FILE`
// leaves one), and VXLAN and Geneve devices with their VNI, remote and
// local addresses and UDP port (busybox makes them with none), over
// rtnetlink as iproute2 sends it.
//
//	vmtool link add NAME type veth peer PEER [netns FILE]
//	vmtool link add NAME type vxlan id VNI remote ADDR [local ADDR] [dstport PORT]
//	vmtool link add NAME type geneve id VNI remote ADDR [dstport PORT]
func link(args []string) int {
	if len(args) < 4 || args[0] != "add" || args[2] != "type" {
		return linkUsage()
	}
	name, kind := args[1], args[3]
	opts := map[string]string{}
	for rest := args[4:]; len(rest) > 0; rest = rest[2:] {
		if len(rest) < 2 {
			return linkUsage()
		}
		opts[rest[0]] = rest[1]
	}
	data, err := linkData(kind, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtool link add %s type %s: %v\n", name, kind, err)
		return 2
	}
	info := append(nlaStr(iflaInfoKind, kind), nla(iflaInfoData|nlaFNested, data)...)
	msg := append(ifinfomsg(), nlaStr(iflaIfname, name)...)
	msg = append(msg, nla(iflaLinkinfo|nlaFNested, info)...)
	if err := rtnlSend(rtmNewlink, nlmFAck|nlmFCreate|nlmFExcl, msg); err != nil {
		fmt.Fprintf(os.Stderr, "vmtool link add %s type %s: %v\n", name, kind, err)
		return 1
	}
	return 0
}

func linkUsage() int {
	fmt.Fprintln(os.Stderr, "usage: vmtool link add NAME type veth peer PEER [netns FILE] | vmtool link add NAME type vxlan|geneve id VNI remote ADDR [local ADDR] [dstport PORT]")
	return 2
}

// Rtnetlink constants (linux/rtnetlink.h, linux/if_link.h, linux/veth.h).
const (
	rtmNewlink   = 16
	nlmFExcl     = 0x200
	iflaIfname   = 3
	iflaLinkinfo = 18
	iflaNetNsFd  = 28
	iflaInfoKind = 1
	iflaInfoData = 2
	vethInfoPeer = 1

	iflaVxlanID    = 1
	iflaVxlanGroup = 2 // the remote address, unicast or multicast
	iflaVxlanLocal = 4
	iflaVxlanPort  = 15
	iflaGeneveID   = 1
	iflaGeneveRmt  = 2
	iflaGenevePort = 5
	vxlanPortIANA  = 4789
	genevePortIANA = 6081
)

// ifinfomsg is an empty struct ifinfomsg: family, type, index, flags.
func ifinfomsg() []byte { return make([]byte, 16) }

// linkData is IFLA_INFO_DATA of a kind of device.
func linkData(kind string, opts map[string]string) ([]byte, error) {
	addr := func(key string) ([]byte, error) {
		ip := net.ParseIP(opts[key]).To4()
		if ip == nil {
			return nil, fmt.Errorf("%s %q is not an IPv4 address", key, opts[key])
		}
		return ip, nil
	}
	num := func(key string, def, max uint64) (uint64, error) {
		s, ok := opts[key]
		if !ok {
			if def == 0 {
				return 0, fmt.Errorf("%s is missing", key)
			}
			return def, nil
		}
		v, err := strconv.ParseUint(s, 0, 32)
		if err != nil || v > max {
			return 0, fmt.Errorf("%s %q is not a number up to %d", key, s, max)
		}
		return v, nil
	}
	u32 := func(typ uint16, v uint64) []byte { return nla(typ, binary.LittleEndian.AppendUint32(nil, uint32(v))) }
	be16 := func(typ uint16, v uint64) []byte { return nla(typ, binary.BigEndian.AppendUint16(nil, uint16(v))) }
	switch kind {
	case "veth":
		if opts["peer"] == "" {
			return nil, fmt.Errorf("peer is missing")
		}
		peer := append(ifinfomsg(), nlaStr(iflaIfname, opts["peer"])...)
		if file, ok := opts["netns"]; ok {
			// The descriptor is read while the message is handled: it
			// stays open until the process ends.
			fd, err := syscall.Open(file, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				return nil, fmt.Errorf("netns %s: %w", file, err)
			}
			peer = append(peer, u32(iflaNetNsFd, uint64(fd))...)
		}
		return nla(vethInfoPeer, peer), nil
	case "vxlan", "geneve":
		id, err := num("id", 0, 0xffffff)
		if err != nil {
			return nil, err
		}
		remote, err := addr("remote")
		if err != nil {
			return nil, err
		}
		if kind == "geneve" {
			port, err := num("dstport", genevePortIANA, 0xffff)
			if err != nil {
				return nil, err
			}
			return append(append(u32(iflaGeneveID, id), nla(iflaGeneveRmt, remote)...), be16(iflaGenevePort, port)...), nil
		}
		port, err := num("dstport", vxlanPortIANA, 0xffff)
		if err != nil {
			return nil, err
		}
		b := append(append(u32(iflaVxlanID, id), nla(iflaVxlanGroup, remote)...), be16(iflaVxlanPort, port)...)
		if _, ok := opts["local"]; ok {
			local, err := addr("local")
			if err != nil {
				return nil, err
			}
			b = append(b, nla(iflaVxlanLocal, local)...)
		}
		return b, nil
	}
	return nil, fmt.Errorf("not a kind vmtool makes (veth, vxlan, geneve)")
}

// rtnlSend sends one rtnetlink request and waits for its ack.
func rtnlSend(typ, flags uint16, body []byte) error {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_ROUTE)
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
	msg := make([]byte, 16, 16+len(body))
	binary.LittleEndian.PutUint16(msg[4:], typ)
	binary.LittleEndian.PutUint16(msg[6:], flags|nlmFRequest)
	binary.LittleEndian.PutUint32(msg[8:], 1)
	msg = append(msg, body...)
	binary.LittleEndian.PutUint32(msg, uint32(len(msg)))
	if err := syscall.Sendto(fd, msg, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	buf := make([]byte, 1<<16)
	for {
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
				return nil
			}
			b = b[(l+3)&^3:]
		}
	}
}
