package output

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// Names gives the names a cluster user knows the kernel's IDs by: the pod,
// container or ip netns of a network namespace, the pod behind a host-side
// veth or an address, the container a process runs in (runtime/names'
// Resolver, adapted by the session). Every lookup is a read of what user
// space learnt before, never I/O: an ID not yet known prints as it always
// did, and gets its name once it is known.
type Names interface {
	Netns(inode uint64) (Name, bool)
	Pid(pid uint32) (Name, bool)
	Dev(name string) (Name, bool)
	Addr(a netip.Addr) (Name, bool)
}

// Name is what the formats print of a namespace, device, address or
// process: the pod (Namespace, Pod), the containers, and the label text
// shows in parentheses (default/web-0, podman:web, netns:blue).
type Name struct {
	Namespace, Pod, Container string
	Label                     string
}

// SetNames gives the resolver that annotates values with the names of
// pods and containers; nil (the default) prints IDs alone.
func (f *Values) SetNames(n Names) { f.names = n }

// NetnsName is the name of a network namespace by its inode, if known.
func (f *Values) NetnsName(inode uint64) (Name, bool) {
	if f == nil || f.names == nil || inode == 0 {
		return Name{}, false
	}
	return f.names.Netns(inode)
}

// appendResolved appends the name a FmtPod, FmtPodNS or FmtContainer value
// stands for: the pod's name, its Kubernetes namespace, its containers.
// Where the namespace is no pod's, pod prints what it is (podman:web,
// netns:blue) or netns:INODE, so that map keys of different namespaces
// stay apart, and podns and container print "-" (container: a podman or
// Docker container's name where it is one).
func (f *Values) appendResolved(dst []byte, fm types.Fmt, inode uint64) []byte {
	n, _ := f.NetnsName(inode)
	switch {
	case fm == types.FmtPod && n.Pod != "":
		return append(dst, n.Pod...)
	case fm == types.FmtPod && n.Label != "":
		return append(dst, n.Label...)
	case fm == types.FmtPod:
		return strconv.AppendUint(append(dst, "netns:"...), inode, 10)
	case fm == types.FmtPodNS && n.Namespace != "":
		return append(dst, n.Namespace...)
	case fm == types.FmtContainer && n.Container != "":
		return append(dst, n.Container...)
	}
	return append(dst, '-')
}

// nameOfValue is the name a value of a named format stands for: a netns
// inode's, a pid's, a host veth's or an address's, where known.
func (f *Values) nameOfValue(t types.Type, raw []byte) (Name, bool) {
	if f.names == nil {
		return Name{}, false
	}
	switch {
	case t.Kind == types.Int && (t.Fmt == types.FmtNetns || t.Fmt.Named()):
		return f.NetnsName(binary.LittleEndian.Uint64(raw) & 0xffffffff)
	case t.Kind == types.Int && t.Fmt == types.FmtPid:
		return f.names.Pid(uint32(binary.LittleEndian.Uint64(raw)))
	case t.Kind == types.String && t.Fmt == types.FmtDev:
		if i := bytes.IndexByte(raw, 0); i >= 0 {
			raw = raw[:i]
		}
		return f.names.Dev(string(raw))
	case t.Kind == types.Addr || t.Kind == types.Endpoint:
		if a, ok := addrOf(raw); ok {
			return f.names.Addr(a)
		}
	}
	return Name{}, false
}

// addrOf reads an address value: 16 bytes, then the family.
func addrOf(raw []byte) (netip.Addr, bool) {
	if len(raw) < codegen.AddrSize {
		return netip.Addr{}, false
	}
	switch raw[16] {
	case 4:
		return netip.AddrFrom4([4]byte(raw[:4])), true
	case 6:
		return netip.AddrFrom16([16]byte(raw[:16])), true
	}
	return netip.Addr{}, false
}

// appendNamed appends a value as text shows it: appendValue's text, then,
// for a network namespace, a process, a host-side veth or an address whose
// pod or container is known, its label in parentheses:
// 4026532177 (default/web-0). JSON keeps values plain and gives the names
// fields of their own (appendJSONNames).
func (f *Values) appendNamed(dst []byte, t types.Type, raw []byte) []byte {
	dst = f.appendValue(dst, t, raw)
	if t.Fmt.Named() {
		return dst
	}
	if n, ok := f.nameOfValue(t, raw); ok && n.Label != "" {
		dst = append(append(append(dst, " ("...), n.Label...), ')')
	}
	return dst
}

// eventName is the name of a print record: that of its first network
// namespace value, else its first device's, address's or process's.
func (p *Printer) eventName(ev *codegen.Event, b []byte) (Name, bool) {
	if p.fmt.names == nil {
		return Name{}, false
	}
	for _, pass := range [...]func(types.Type) bool{
		func(t types.Type) bool { return t.Kind == types.Int && (t.Fmt == types.FmtNetns || t.Fmt.Named()) },
		func(t types.Type) bool { return t.Kind == types.String && t.Fmt == types.FmtDev },
		func(t types.Type) bool { return t.Kind == types.Int && t.Fmt == types.FmtPid },
	} {
		for _, a := range ev.Args {
			if pass(a.Type) {
				if n, ok := p.fmt.nameOfValue(a.Type, b[a.Offset:a.Offset+a.Size]); ok && n.Pod+n.Container != "" {
					return n, true
				}
			}
		}
	}
	return Name{}, false
}

// appendJSONName appends one of a record's names as a JSON field
// (`,"pod":"web-0"`) where it is known: key is container, namespace or
// pod, each placed in json.Marshal's order among the record's fields.
func appendJSONName(dst []byte, n Name, key string) []byte {
	var v string
	switch key {
	case "container":
		v = n.Container
	case "namespace":
		v = n.Namespace
	case "pod":
		v = n.Pod
	}
	if v == "" {
		return dst
	}
	dst = append(append(append(dst, ',', '"'), key...), `":`...)
	return appendJSONString(dst, v)
}
