package session

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// Loading a tp_btf, fentry or fexit program, cilium/ebpf finds its target's
// BTF type ID in the kernel's whole BTF: decoding it (some 130 000 types) and
// the target's graph of types (sk_buff's) was most of a one-liner's start.
// Where this kernel's BTF cache holds the target's ID (the check looked the
// target up), loadByKernelTypeID loads the program with it instead, as
// cilium/ebpf would. Anything it does not expect, and any error, leaves the
// program to cilium/ebpf, whose errors say what went wrong.

// KernelTypeIDs gives the kernel's BTF type IDs of named types
// (kernel.CachedTypes).
type KernelTypeIDs interface {
	KernelTypeID(name string, typ any) (btf.TypeID, bool)
}

// targetType is the type cilium/ebpf looks up for a tracing program's
// target (findProgramTargetInKernel): the tracepoint's btf_trace_ typedef,
// or the function.
func targetType(p *ebpf.ProgramSpec) (string, any, bool) {
	if p.Type != ebpf.Tracing || p.AttachTo == "" || p.AttachTarget != nil || strings.Contains(p.AttachTo, ":") {
		return "", nil, false
	}
	switch p.AttachType {
	case ebpf.AttachTraceRawTp:
		return "btf_trace_" + p.AttachTo, new(*btf.Typedef), true
	case ebpf.AttachTraceFEntry, ebpf.AttachTraceFExit:
		return p.AttachTo, new(*btf.Func), true
	}
	return "", nil, false
}

// progLoadAttr is the start of union bpf_attr for BPF_PROG_LOAD, as far as
// attach_btf_obj_fd; the kernel takes the fields after it as zero.
type progLoadAttr struct {
	progType           uint32
	insnCnt            uint32
	insns              unsafe.Pointer
	license            unsafe.Pointer
	logLevel           uint32
	logSize            uint32
	logBuf             uint64
	kernVersion        uint32
	progFlags          uint32
	progName           [unix.BPF_OBJ_NAME_LEN]byte
	progIfindex        uint32
	expectedAttachType uint32
	progBTFFd          uint32
	funcInfoRecSize    uint32
	funcInfo           uint64
	funcInfoCnt        uint32
	lineInfoRecSize    uint32
	lineInfo           uint64
	lineInfoCnt        uint32
	attachBTFID        uint32
	attachBTFObjFd     uint32
}

// objName is the program's name as cilium/ebpf gives it to the kernel:
// letters, digits, _ and ., at most 15 of them.
func objName(name string) [unix.BPF_OBJ_NAME_LEN]byte {
	var out [unix.BPF_OBJ_NAME_LEN]byte
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' {
			return r
		}
		return -1
	}, name)
	copy(out[:len(out)-1], name)
	return out
}

var errNotByID = errors.New("not loaded by a cached type ID")

// loadByKernelTypeID loads a tracing program whose target's type ID ids
// holds, with the maps it references. It is for kernels of 6.1 on, where
// cilium/ebpf's fixups for older kernels (probe_read, names without dots)
// change nothing; programs that call functions, kfuncs or anything but maps
// are left to cilium/ebpf too.
func loadByKernelTypeID(p *codegen.Program, maps map[string]*ebpf.Map, ids KernelTypeIDs) (*ebpf.Program, error) {
	if ids == nil || strconv.IntSize != 64 || !kernel.NoPrealloc() {
		return nil, fmt.Errorf("%w: no IDs, or a kernel before 6.1", errNotByID)
	}
	spec := p.Prog
	name, typ, ok := targetType(spec)
	if !ok || spec.Flags != 0 || spec.License == "" {
		return nil, fmt.Errorf("%w: not a plain tracing program", errNotByID)
	}
	id, ok := ids.KernelTypeID(name, typ)
	if !ok {
		return nil, fmt.Errorf("%w: no ID for %s", errNotByID, name)
	}
	insns := make(asm.Instructions, len(spec.Instructions))
	copy(insns, spec.Instructions)
	for i := range insns {
		ins := &insns[i]
		if ins.IsFunctionCall() || ins.IsKfuncCall() || ins.IsFunctionReference() {
			return nil, fmt.Errorf("%w: instruction %d calls a function", errNotByID, i)
		}
		ref := ins.Reference()
		if ref == "" || !ins.IsLoadFromMap() {
			continue
		}
		m := maps[ref]
		if m == nil {
			return nil, fmt.Errorf("%w: no map %s", errNotByID, ref)
		}
		if err := ins.AssociateMap(m); err != nil {
			return nil, fmt.Errorf("%w: %v", errNotByID, err)
		}
	}
	var code bytes.Buffer
	if err := insns.Marshal(&code, hostByteOrder()); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotByID, err)
	}
	bytecode := code.Bytes()
	license := append([]byte(spec.License), 0)
	attr := progLoadAttr{
		progType:           unix.BPF_PROG_TYPE_TRACING,
		insnCnt:            uint32(len(bytecode) / asm.InstructionSize),
		insns:              unsafe.Pointer(&bytecode[0]),
		license:            unsafe.Pointer(&license[0]),
		progName:           objName(spec.Name),
		expectedAttachType: uint32(spec.AttachType),
		attachBTFID:        uint32(id),
	}
	var errno unix.Errno
	for range 5 {
		var fd uintptr
		fd, _, errno = unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_LOAD, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
		runtime.KeepAlive(&attr)
		runtime.KeepAlive(bytecode)
		runtime.KeepAlive(license)
		if errno == 0 {
			return ebpf.NewProgramFromFD(int(fd))
		}
		if errno != unix.EAGAIN {
			break // else the verifier was interrupted: again, as cilium/ebpf does
		}
	}
	return nil, errno
}

// hostByteOrder is binary.LittleEndian or BigEndian as the host is: the
// instructions' Marshal takes only those two.
func hostByteOrder() binary.ByteOrder {
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		return binary.LittleEndian
	}
	return binary.BigEndian
}
