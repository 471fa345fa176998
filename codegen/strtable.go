package codegen

import (
	"strings"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// strerror(e), signal_name(n) and syscall_name(n) of a value known only when the probe
// runs read their text from a read-only table the compiler fills: the
// errors' texts as strerror(3) has them (Go's, glibc's table,
// capitalised), the signals' names. A number past the table is "".
const (
	ErrnoTable   = "strerror"
	SignalTable  = "signame"
	SyscallTable = "sysname"
	errnoCount   = 134
	signalCount  = 65
)

// strTable adds the table of name.
func (ms *mapSet) strTable(name string) {
	if _, ok := ms.specs[name]; ok {
		return
	}
	n := errnoCount
	switch name {
	case SignalTable:
		n = signalCount
	case SyscallTable:
		n = stdlib.SyscallCount()
	}
	spec := &ebpf.MapSpec{Name: name, Type: ebpf.Array, KeySize: 4, ValueSize: stdlib.ConstStrLen, MaxEntries: uint32(n),
		Flags: unix.BPF_F_RDONLY_PROG}
	for i := range n {
		var text string
		if name == SignalTable {
			text = unix.SignalName(syscall.Signal(i))
		} else if name == SyscallTable {
			text = stdlib.SyscallName(int64(i))
		} else if i == 0 {
			text = "Success"
		} else if s := syscall.Errno(i).Error(); !strings.HasPrefix(s, "errno ") {
			text = strings.ToUpper(s[:1]) + s[1:]
		}
		v := make([]byte, stdlib.ConstStrLen)
		copy(v[:stdlib.ConstStrLen-1], text)
		spec.Contents = append(spec.Contents, ebpf.MapKV{Key: uint32(i), Value: v})
	}
	ms.specs[name] = spec
}

// tableString writes strerror(x)'s or signal_name(x)'s text at the
// zeroed slot at: x (its magnitude: syscalls return -EPERM) looked up.
func (g *gen) tableString(c *lang.CallExpr, at int16, size int) error {
	table := ErrnoTable
	switch c.Name {
	case "signal_name":
		table = SignalTable
	case "syscall_name":
		table = SyscallTable
	}
	g.maps.strTable(table)
	if err := g.expr(c.Args[0]); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	key, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	pos := g.label("pos")
	g.emit(asm.JSGE.Imm(asm.R0, 0, pos), asm.Neg.Imm(asm.R0, 0))
	g.mark(pos)
	g.emit(asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord))
	g.lookup(table, key)
	none := g.label("notext")
	g.emit(asm.JEq.Imm(asm.R0, 0, none))
	for off := 0; off < min(size, stdlib.ConstStrLen); off += 8 {
		g.emit(asm.LoadMem(asm.R1, asm.R0, int16(off), asm.DWord), asm.StoreMem(asm.RFP, at+int16(off), asm.R1, asm.DWord))
	}
	g.mark(none)
	return nil
}
