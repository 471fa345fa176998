package codegen

import (
	"encoding/binary"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// username and cgroup_path(id) read their text from a read-only hash the
// compiler fills: /etc/passwd's users by uid, the cgroup v2 directories
// by id. bpftrace names them in user space when it prints; here what is
// not in the table when the script is compiled (a cgroup made since) is "".
const (
	UserTable   = "usernames"
	CgroupTable = "cgpaths"
)

// nameTable adds the table of name.
func (ms *mapSet) nameTable(name string) {
	if _, ok := ms.specs[name]; ok {
		return
	}
	entries, size := stdlib.Usernames(), stdlib.UsernameLen
	if name == CgroupTable {
		entries, size = stdlib.CgroupPaths(), stdlib.CgroupPathLen
	}
	spec := &ebpf.MapSpec{Name: name, Type: ebpf.Hash, KeySize: 8, ValueSize: uint32(size),
		MaxEntries: uint32(max(1, len(entries))), Flags: unix.BPF_F_RDONLY_PROG}
	for k, text := range entries {
		v := make([]byte, size)
		copy(v[:size-1], text)
		key := make([]byte, 8)
		binary.NativeEndian.PutUint64(key, k)
		spec.Contents = append(spec.Contents, ebpf.MapKV{Key: key, Value: v})
	}
	ms.specs[name] = spec
}

// nameString writes username's or cgroup_path(id)'s text at the zeroed
// slot at: the call's one argument (uid, the id) looked up.
func (g *gen) nameString(c *lang.CallExpr, at int16, size int) error {
	table, n := UserTable, stdlib.UsernameLen
	if c.Name == "cgroup_path" {
		table, n = CgroupTable, stdlib.CgroupPathLen
	}
	g.maps.nameTable(table)
	if err := g.expr(c.Args[0]); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	key, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord))
	g.lookup(table, key)
	none := g.label("noname")
	g.emit(asm.JEq.Imm(asm.R0, 0, none))
	for off := 0; off+8 <= min(size, n); off += 8 {
		g.emit(asm.LoadMem(asm.R1, asm.R0, int16(off), asm.DWord), asm.StoreMem(asm.RFP, at+int16(off), asm.R1, asm.DWord))
	}
	g.mark(none)
	return nil
}
