package check

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf/btf"
)

// NfLayout holds the byte offsets that hook, table and chain read, from the
// kernel's BTF: the struct nf_hook_state a hook's caller keeps on its stack,
// the hook entries of a namespace, and the tables that registered them.
type NfLayout struct {
	// StateIn, StateOut, StateSk and StateNet locate in, out, sk and net
	// in struct nf_hook_state (hook and pf are its first two bytes).
	StateIn, StateOut, StateSk, StateNet uint32
	// DevNet is net_device's nd_net.net; SkNet is sock's skc_net.net.
	DevNet, SkNet uint32
	// Hooks locates, by protocol family (NFPROTO_IPV4...), the array of hook
	// entry pointers in struct net, and HookCount is its length.
	Hooks     map[uint8]uint32
	HookCount map[uint8]int
	// EntryHooks locates hooks[] in struct nf_hook_entries.
	EntryHooks uint32
	// ChainName and ChainTable are nft_chain's name and table; TableName
	// is nft_table's name; XtName is xt_table's (an array, not a pointer).
	ChainName, ChainTable, TableName, XtName uint32
	// Nft and Xt say whether nftables' and iptables' structs were found:
	// in vmlinux, or in the nf_tables and x_tables modules' BTF where they
	// are modules (and loaded: no table of an unloaded module can hook).
	Nft, Xt bool
}

// moduleBTF loads a module's BTF, from /sys/kernel/btf, on top of the
// kernel's.
func moduleBTF(module string, base *btf.Spec) (*btf.Spec, error) {
	if base == nil {
		return nil, fmt.Errorf("no whole BTF to load module %s's on", module)
	}
	f, err := os.Open(filepath.Join("/sys/kernel/btf", module))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return btf.LoadSplitSpecFromReader(f, base)
}

// netfilterLayout resolves the offsets; it fails, naming what is missing,
// on a kernel built without netfilter.
func netfilterLayout(spec BTF) (*NfLayout, error) {
	offIn := func(spec BTF, st string, path ...string) (uint32, error) {
		var s *btf.Struct
		if err := spec.TypeByName(st, &s); err != nil {
			return 0, fmt.Errorf("this kernel's BTF has no struct %s", st)
		}
		var t btf.Type = s
		var total uint32
		for _, name := range path {
			m, o, ok := FindMember(t, name)
			if !ok {
				return 0, fmt.Errorf("this kernel's struct %s has no %s", st, name)
			}
			total += o
			t = btf.UnderlyingType(m.Type)
		}
		return total / 8, nil
	}
	off := func(st string, path ...string) (uint32, error) { return offIn(spec, st, path...) }
	l := &NfLayout{Hooks: map[uint8]uint32{}, HookCount: map[uint8]int{}}
	var err error
	for _, f := range []struct {
		dst  *uint32
		st   string
		path []string
	}{
		{&l.StateIn, "nf_hook_state", []string{"in"}},
		{&l.StateOut, "nf_hook_state", []string{"out"}},
		{&l.StateSk, "nf_hook_state", []string{"sk"}},
		{&l.StateNet, "nf_hook_state", []string{"net"}},
		{&l.DevNet, "net_device", []string{"nd_net", "net"}},
		{&l.SkNet, "sock", []string{"__sk_common", "skc_net", "net"}},
		{&l.EntryHooks, "nf_hook_entries", []string{"hooks"}},
	} {
		if *f.dst, err = off(f.st, f.path...); err != nil {
			return nil, err
		}
	}
	// The tables' own structs, where they are built in or their module is
	// loaded; without them, table and chain stay empty for that kind.
	tables := func(module string, fields map[*uint32][2]string) bool {
		s := spec
		for try := 0; try < 2; try++ {
			ok := true
			for dst, f := range fields {
				o, err := offIn(s, f[0], f[1])
				if err != nil {
					ok = false
					break
				}
				*dst = o
			}
			if ok {
				return true
			}
			if s, err = moduleBTF(module, wholeSpec(spec)); err != nil {
				return false
			}
		}
		return false
	}
	l.Nft = tables("nf_tables", map[*uint32][2]string{&l.ChainName: {"nft_chain", "name"}, &l.ChainTable: {"nft_chain", "table"}, &l.TableName: {"nft_table", "name"}})
	l.Xt = tables("x_tables", map[*uint32][2]string{&l.XtName: {"xt_table", "name"}})
	var nf *btf.Struct
	if err := spec.TypeByName("netns_nf", &nf); err != nil {
		return nil, fmt.Errorf("this kernel's BTF has no struct netns_nf")
	}
	base, err := off("net", "nf")
	if err != nil {
		return nil, err
	}
	for pf, name := range map[uint8]string{2: "hooks_ipv4", 10: "hooks_ipv6", 3: "hooks_arp", 7: "hooks_bridge"} {
		m, o, ok := FindMember(nf, name)
		if !ok {
			continue // a family the kernel was built without
		}
		if a, ok := btf.UnderlyingType(m.Type).(*btf.Array); ok {
			l.Hooks[pf] = base + o/8
			l.HookCount[pf] = int(a.Nelems)
		}
	}
	return l, nil
}
