package kernel

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// PacketProg is a loaded BPF program of a packet type bpf: probes trace.
type PacketProg struct {
	ID   uint32
	Name string
	// Type is tc (sched_cls, sched_act), xdp or cgroup_skb.
	Type string
	// Func is its entry function's name in its BTF; "" without BTF.
	Func string
}

// PacketProgType names a program type as bpf: probes do, "" for a type
// they do not trace.
func PacketProgType(t ebpf.ProgramType) string {
	switch t {
	case ebpf.SchedCLS, ebpf.SchedACT:
		return "tc"
	case ebpf.XDP:
		return "xdp"
	case ebpf.CGroupSKB:
		return "cgroup_skb"
	}
	return ""
}

// PacketProgs lists the loaded tc, XDP and cgroup_skb programs in id order,
// walking the kernel's program ids. A program that goes away while it is
// listed is left out.
func PacketProgs() ([]PacketProg, error) {
	var out []PacketProg
	id := ebpf.ProgramID(0)
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("list BPF programs: %w", err)
		}
		id = next
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue // gone, or not ours to open
		}
		pp, ok := packetProg(p, uint32(id))
		p.Close()
		if ok {
			out = append(out, pp)
		}
	}
}

func packetProg(p *ebpf.Program, id uint32) (PacketProg, bool) {
	info, err := p.Info()
	if err != nil {
		return PacketProg{}, false
	}
	typ := PacketProgType(info.Type)
	if typ == "" {
		return PacketProg{}, false
	}
	pp := PacketProg{ID: id, Name: info.Name, Type: typ}
	if fis, err := info.FuncInfos(); err == nil {
		for _, fi := range fis {
			if fi.Offset == 0 && fi.Func != nil {
				pp.Func = fi.Func.Name
			}
		}
	}
	return pp, true
}

// Lockdown is the kernel's lockdown mode ([none] integrity confidentiality:
// the bracketed one), "" where securityfs does not say.
func Lockdown() string {
	b, err := os.ReadFile("/sys/kernel/security/lockdown")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return ""
}

// PacketProgAttachments says where the kernel's BPF links attach each
// program, by program id: "tcx ingress lo", "xdp veth0", "cgroup 1234".
// Programs attached without a link (tc filters through netlink, XDP set
// by netlink) are not among them.
func PacketProgAttachments() map[uint32][]string {
	out := map[uint32][]string{}
	it := new(link.Iterator)
	defer it.Close()
	for it.Next() {
		info, err := it.Link.Info()
		if err != nil {
			continue
		}
		var where string
		switch {
		case info.TCX() != nil:
			dir := "ingress"
			if uint32(info.TCX().AttachType) == uint32(ebpf.AttachTCXEgress) {
				dir = "egress"
			}
			where = "tcx " + dir + " " + ifName(info.TCX().Ifindex)
		case info.XDP() != nil:
			where = "xdp " + ifName(info.XDP().Ifindex)
		case info.Cgroup() != nil:
			where = fmt.Sprintf("cgroup %d", info.Cgroup().CgroupId)
		default:
			continue
		}
		id := uint32(info.Program)
		out[id] = append(out[id], where)
	}
	return out
}

func ifName(index uint32) string {
	if ifi, err := net.InterfaceByIndex(int(index)); err == nil {
		return ifi.Name
	}
	return fmt.Sprintf("ifindex %d", index)
}
