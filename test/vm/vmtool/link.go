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

// link makes the network devices busybox's ip cannot: a veth pair whose
// peer is in another network namespace (a file, as `unshare --net=FILE`
// leaves one), VXLAN and Geneve devices with their VNI, remote and local
// addresses (IPv4 or IPv6) and UDP port (busybox makes them with none),
// and IP tunnels over rtnetlink (busybox's ip tunnel needs the fallback
// devices' ioctls), as iproute2 sends them.
//
//	vmtool link add NAME type veth peer PEER [netns FILE]
//	vmtool link add NAME type vxlan id VNI remote ADDR [local ADDR] [dstport PORT]
//	vmtool link add NAME type geneve id VNI remote ADDR [dstport PORT]
//	vmtool link add NAME type gre|ip6gre|ipip|sit|ip6tnl remote ADDR local ADDR
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
	info := append(nl.AttrStr(iflaInfoKind, kind), nl.Attr(iflaInfoData|nl.FNested, data)...)
	msg := append(ifinfomsg(), nl.AttrStr(iflaIfname, name)...)
	msg = append(msg, nl.Attr(iflaLinkinfo|nl.FNested, info)...)
	if err := rtnlSend(rtmNewlink, nl.FAck|nl.FCreate|nl.FExcl, msg); err != nil {
		fmt.Fprintf(os.Stderr, "vmtool link add %s type %s: %v\n", name, kind, err)
		return 1
	}
	return 0
}

func linkUsage() int {
	fmt.Fprintln(os.Stderr, "usage: vmtool link add NAME type veth peer PEER [netns FILE] | vmtool link add NAME type vxlan|geneve id VNI remote ADDR [local ADDR] [dstport PORT] | vmtool link add NAME type gre|ip6gre|ipip|sit|ip6tnl remote ADDR local ADDR")
	return 2
}

// Rtnetlink constants (linux/rtnetlink.h, linux/if_link.h, linux/veth.h).
const (
	rtmNewlink   = 16
	iflaIfname   = 3
	iflaLinkinfo = 18
	iflaNetNsFd  = 28
	iflaInfoKind = 1
	iflaInfoData = 2
	vethInfoPeer = 1

	iflaVxlanID     = 1
	iflaVxlanGroup  = 2 // the remote address, unicast or multicast
	iflaVxlanLocal  = 4
	iflaVxlanPort   = 15
	iflaVxlanGroup6 = 16
	iflaVxlanLocal6 = 17
	iflaGeneveID    = 1
	iflaGeneveRmt   = 2
	iflaGenevePort  = 5
	iflaGeneveRmt6  = 7
	iflaGreLocal    = 6
	iflaGreRemote   = 7
	iflaIptunLocal  = 2
	iflaIptunRemote = 3
	vxlanPortIANA   = 4789
	genevePortIANA  = 6081
)

// ifinfomsg is an empty struct ifinfomsg: family, type, index, flags.
func ifinfomsg() []byte { return make([]byte, 16) }

// linkData is IFLA_INFO_DATA of a kind of device.
func linkData(kind string, opts map[string]string) ([]byte, error) {
	// addr is an IPv4 address's 4 bytes or an IPv6 address's 16, and
	// the attribute of its family: v4 or v6.
	addr := func(key string, v4, v6 uint16) ([]byte, uint16, error) {
		ip := net.ParseIP(opts[key])
		if ip == nil {
			return nil, 0, fmt.Errorf("%s %q is not an IP address", key, opts[key])
		}
		if ip4 := ip.To4(); ip4 != nil {
			return ip4, v4, nil
		}
		return ip, v6, nil
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
	u32 := func(typ uint16, v uint64) []byte {
		return nl.Attr(typ, binary.LittleEndian.AppendUint32(nil, uint32(v)))
	}
	be16 := func(typ uint16, v uint64) []byte { return nl.Attr(typ, binary.BigEndian.AppendUint16(nil, uint16(v))) }
	switch kind {
	case "veth":
		if opts["peer"] == "" {
			return nil, fmt.Errorf("peer is missing")
		}
		peer := append(ifinfomsg(), nl.AttrStr(iflaIfname, opts["peer"])...)
		if file, ok := opts["netns"]; ok {
			// The descriptor is read while the message is handled: it
			// stays open until the process ends.
			fd, err := syscall.Open(file, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				return nil, fmt.Errorf("netns %s: %w", file, err)
			}
			peer = append(peer, u32(iflaNetNsFd, uint64(fd))...)
		}
		return nl.Attr(vethInfoPeer, peer), nil
	case "vxlan", "geneve":
		id, err := num("id", 0, 0xffffff)
		if err != nil {
			return nil, err
		}
		if kind == "geneve" {
			remote, typ, err := addr("remote", iflaGeneveRmt, iflaGeneveRmt6)
			if err != nil {
				return nil, err
			}
			port, err := num("dstport", genevePortIANA, 0xffff)
			if err != nil {
				return nil, err
			}
			return append(append(u32(iflaGeneveID, id), nl.Attr(typ, remote)...), be16(iflaGenevePort, port)...), nil
		}
		remote, typ, err := addr("remote", iflaVxlanGroup, iflaVxlanGroup6)
		if err != nil {
			return nil, err
		}
		port, err := num("dstport", vxlanPortIANA, 0xffff)
		if err != nil {
			return nil, err
		}
		b := append(append(u32(iflaVxlanID, id), nl.Attr(typ, remote)...), be16(iflaVxlanPort, port)...)
		if _, ok := opts["local"]; ok {
			local, typ, err := addr("local", iflaVxlanLocal, iflaVxlanLocal6)
			if err != nil {
				return nil, err
			}
			b = append(b, nl.Attr(typ, local)...)
		}
		return b, nil
	case "gre", "ip6gre", "ipip", "sit", "ip6tnl":
		// The addresses' attributes are the same for either family:
		// the kind says which the device takes.
		local, remote := uint16(iflaIptunLocal), uint16(iflaIptunRemote)
		if kind == "gre" || kind == "ip6gre" {
			local, remote = iflaGreLocal, iflaGreRemote
		}
		var b []byte
		for _, a := range []struct {
			key string
			typ uint16
		}{{"local", local}, {"remote", remote}} {
			ip, _, err := addr(a.key, a.typ, a.typ)
			if err != nil {
				return nil, err
			}
			b = append(b, nl.Attr(a.typ, ip)...)
		}
		return b, nil
	}
	return nil, fmt.Errorf("not a kind vmtool makes (veth, vxlan, geneve, gre, ip6gre, ipip, sit, ip6tnl)")
}

// rtnlSend sends one rtnetlink request and waits for its ack.
func rtnlSend(typ, flags uint16, body []byte) error {
	return nl.Exchange(syscall.NETLINK_ROUTE, [][]byte{nl.Msg(typ, flags|nl.FAck, body)}, 1)
}
