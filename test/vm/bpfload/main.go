// Command bpfload is the VM suite's loader of the packet programs that
// bpf: probe cases trace (internal/bpfprogtest's, built with cilium/ebpf's
// asm, with BTF). vmtool stays standard-library-only; this helper is built
// by run.sh beside it and copied into the guest.
//
//	bpfload tc DEV PORT NAME    a clsact qdisc on DEV and, on its ingress, a
//	                            direct-action filter: NAME drops UDP to PORT
//	bpfload xdp DEV PORT NAME   NAME as DEV's XDP program (generic mode)
//	bpfload clear DEV           remove both
//	bpfload cgroup ingress|egress PORT NAME
//	                            NAME, a cgroup_skb program that drops UDP to
//	                            PORT, on the root cgroup's ingress or egress
//	                            (cgroup2 mounted at /sys/fs/cgroup first
//	                            where it is not)
//	bpfload cgroup clear        detach the root cgroup's skbt* programs
//
// The programs are attached through rtnetlink, which holds them after the
// command exits, on every kernel (tcx links need 6.6, and would need pins).
package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/internal/bpfprogtest"
	"github.com/skbtrace/skbtrace/test/vm/nl"
)

// cls_bpf's attributes (<linux/pkt_cls.h>), which x/sys/unix lacks.
const (
	tcaBPFFD            = 6
	tcaBPFName          = 7
	tcaBPFFlags         = 8
	tcaBPFFlagActDirect = 1
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "bpfload: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: bpfload tc|xdp DEV PORT NAME, bpfload clear DEV, or bpfload cgroup ingress|egress|clear [PORT NAME]")
	}
	if args[0] == "cgroup" {
		return cgroup(args[1:])
	}
	ifi, err := net.InterfaceByName(args[1])
	if err != nil {
		return err
	}
	if args[0] == "clear" {
		errQ := rtnl(unix.RTM_DELQDISC, 0, tcmsg(ifi.Index, 0xffff0000, 0xfffffff1, 0), nl.AttrStr(unix.TCA_KIND, "clsact"))
		errX := setXDP(ifi.Index, -1)
		if errQ != nil && errQ != unix.EINVAL && errQ != unix.ENOENT {
			return fmt.Errorf("delete clsact: %w", errQ)
		}
		return errX
	}
	if len(args) != 4 {
		return fmt.Errorf("usage: bpfload %s DEV PORT NAME", args[0])
	}
	port, err := strconv.ParseUint(args[2], 10, 16)
	if err != nil {
		return fmt.Errorf("port %q: %w", args[2], err)
	}
	name := args[3]
	switch args[0] {
	case "tc":
		prog, err := ebpf.NewProgram(bpfprogtest.TCDropPort(name, uint16(port)))
		if err != nil {
			return fmt.Errorf("load %s: %w", name, err)
		}
		defer prog.Close()
		err = rtnl(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_EXCL, tcmsg(ifi.Index, 0xffff0000, 0xfffffff1, 0), nl.AttrStr(unix.TCA_KIND, "clsact"))
		if err != nil && err != unix.EEXIST {
			return fmt.Errorf("add clsact to %s: %w", ifi.Name, err)
		}
		opts := append(append(attrU32(tcaBPFFD, uint32(prog.FD())), nl.AttrStr(tcaBPFName, name)...), attrU32(tcaBPFFlags, tcaBPFFlagActDirect)...)
		// Ingress of clsact, priority 1, every protocol (htons(ETH_P_ALL)).
		body := append(nl.AttrStr(unix.TCA_KIND, "bpf"), nl.Attr(unix.TCA_OPTIONS|unix.NLA_F_NESTED, opts)...)
		if err := rtnl(unix.RTM_NEWTFILTER, unix.NLM_F_CREATE|unix.NLM_F_EXCL, tcmsg(ifi.Index, 0, 0xfffffff2, 1<<16|0x0300), body); err != nil {
			return fmt.Errorf("add the bpf filter to %s: %w", ifi.Name, err)
		}
		return nil
	case "xdp":
		prog, err := ebpf.NewProgram(bpfprogtest.XDPDropPort(name, uint16(port)))
		if err != nil {
			return fmt.Errorf("load %s: %w", name, err)
		}
		defer prog.Close()
		return setXDP(ifi.Index, prog.FD())
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// setXDP sets (fd -1: removes) a device's XDP program in generic mode.
func setXDP(index, fd int) error {
	ifinfo := make([]byte, 16)
	binary.LittleEndian.PutUint32(ifinfo[4:], uint32(index))
	xdp := append(attrU32(unix.IFLA_XDP_FD, uint32(int32(fd))), attrU32(unix.IFLA_XDP_FLAGS, unix.XDP_FLAGS_SKB_MODE)...)
	if err := rtnl(unix.RTM_SETLINK, 0, ifinfo, nl.Attr(unix.IFLA_XDP|unix.NLA_F_NESTED, xdp)); err != nil {
		return fmt.Errorf("set XDP: %w", err)
	}
	return nil
}

func tcmsg(index int, handle, parent, info uint32) []byte {
	b := make([]byte, 20)
	binary.LittleEndian.PutUint32(b[4:], uint32(index))
	binary.LittleEndian.PutUint32(b[8:], handle)
	binary.LittleEndian.PutUint32(b[12:], parent)
	binary.LittleEndian.PutUint32(b[16:], info)
	return b
}

func attrU32(typ uint16, v uint32) []byte {
	return nl.Attr(typ, binary.LittleEndian.AppendUint32(nil, v))
}

// rtnl sends one rtnetlink request of a header and attributes and waits
// for its ack.
func rtnl(typ, flags uint16, hdr []byte, attrs []byte) error {
	return nl.Exchange(unix.NETLINK_ROUTE, [][]byte{nl.Msg(typ, flags|nl.FAck, hdr, attrs)}, 1)
}

// cgroupRoot is where the guest's cgroup2 hierarchy is mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroup attaches a cgroup_skb program to the root cgroup, or detaches
// the skbt* ones. BPF_PROG_ATTACH (not a link) holds the program after
// the command exits; BPF_F_ALLOW_MULTI lets others stay.
func cgroup(args []string) error {
	if _, err := os.Stat(cgroupRoot + "/cgroup.controllers"); err != nil {
		if err := unix.Mount("none", cgroupRoot, "cgroup2", 0, ""); err != nil {
			return fmt.Errorf("mount cgroup2 on %s: %w", cgroupRoot, err)
		}
	}
	dir, err := os.Open(cgroupRoot)
	if err != nil {
		return err
	}
	defer dir.Close()
	if args[0] == "clear" {
		for _, at := range []ebpf.AttachType{ebpf.AttachCGroupInetIngress, ebpf.AttachCGroupInetEgress} {
			res, err := link.QueryPrograms(link.QueryOptions{Target: int(dir.Fd()), Attach: at})
			if err != nil {
				return fmt.Errorf("query %s: %w", cgroupRoot, err)
			}
			for _, ap := range res.Programs {
				prog, err := ebpf.NewProgramFromID(ap.ID)
				if err != nil {
					continue
				}
				info, err := prog.Info()
				if err == nil && len(info.Name) >= 4 && info.Name[:4] == "skbt" {
					err = link.RawDetachProgram(link.RawDetachProgramOptions{Target: int(dir.Fd()), Program: prog, Attach: at})
				}
				prog.Close()
				if err != nil {
					return fmt.Errorf("detach program %d: %w", ap.ID, err)
				}
			}
		}
		return nil
	}
	if len(args) != 3 {
		return fmt.Errorf("usage: bpfload cgroup ingress|egress PORT NAME")
	}
	at := map[string]ebpf.AttachType{"ingress": ebpf.AttachCGroupInetIngress, "egress": ebpf.AttachCGroupInetEgress}[args[0]]
	if at == 0 && args[0] != "ingress" {
		return fmt.Errorf("cgroup %q: ingress or egress", args[0])
	}
	port, err := strconv.ParseUint(args[1], 10, 16)
	if err != nil {
		return fmt.Errorf("port %q: %w", args[1], err)
	}
	prog, err := ebpf.NewProgram(bpfprogtest.CgroupSkbDropPort(args[2], uint16(port)))
	if err != nil {
		return fmt.Errorf("load %s: %w", args[2], err)
	}
	defer prog.Close()
	if err := link.RawAttachProgram(link.RawAttachProgramOptions{Target: int(dir.Fd()), Program: prog, Attach: at, Flags: unix.BPF_F_ALLOW_MULTI}); err != nil {
		return fmt.Errorf("attach %s to %s %s: %w", args[2], cgroupRoot, args[0], err)
	}
	return nil
}
