package kernel

import (
	"fmt"
	"os"
	"runtime"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// pageVirtSize is the size of the kmalloc PageVirt provokes: more than a
// slab serves (two pages, with SLUB), so that it is a whole allocation of
// pages; getxattr allocates at most 64 KiB.
func pageVirtSize(pageSize int) int { return min(4*pageSize, 65536) }

// PageVirt returns how this kernel turns a struct page pointer into the
// address of the page's bytes in its direct map, as page_address() does:
// on x86-64 page_offset_base + (page - vmemmap_base) / sizeof(struct page)
// * PAGE_SIZE, on arm64 PAGE_OFFSET + (page - VMEMMAP_START) /
// sizeof(struct page) * PAGE_SIZE; where sizeof(struct page) divides
// PAGE_SIZE (64 bytes on every production config), both are page * mul +
// off. capture() reads the paged fragments of a non-linear skb with it.
//
// page_offset_base and vmemmap_base are data symbols: /proc/kallsyms lists
// them only on CONFIG_KALLSYMS_ALL kernels, /proc/kcore is often not built,
// and some kernels have neither kprobes nor fentry. So the pair is measured
// with raw tracepoints, on this thread only: a getxattr with a buffer of
// four pages kmallocs it from whole pages, the kernel allocating the pages
// (kmem:mm_page_alloc, the struct page) and then reporting the kmalloc
// (kmem:kmalloc, the address; kmem:kmalloc_node before Linux 6.1, where
// kvmalloc's large allocations report there); off = address - page * mul.
// It needs no symbol and no architecture's constants: the same
// measurement serves x86-64 and arm64.
func PageVirt(spec *btf.Spec) (mul, off uint64, err error) {
	var page *btf.Struct
	if err := spec.TypeByName("page", &page); err != nil {
		return 0, 0, fmt.Errorf("this kernel's BTF has no struct page")
	}
	pageSize := uint64(os.Getpagesize())
	if page.Size == 0 || pageSize%uint64(page.Size) != 0 {
		return 0, 0, fmt.Errorf("sizeof(struct page) is %d bytes, not a divisor of the page size", page.Size)
	}
	mul = pageSize / uint64(page.Size)
	size := pageVirtSize(int(pageSize))

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := int32(unix.Gettid())
	pair, err := ebpf.NewMap(&ebpf.MapSpec{Name: "page_virt", Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1})
	if err != nil {
		return 0, 0, err
	}
	defer pair.Close()
	// mm_page_alloc: the order of four pages is 2.
	for _, tp := range []struct {
		name string
		// The argument recorded, and one that must equal want.
		arg, test int16
		want      int32
		at        int16
		// optional tracepoints may be missing (kmalloc_node, gone in 6.1).
		optional bool
	}{{"mm_page_alloc", 0, 1, 2, 0, false}, {"kmalloc", 1, 2, int32(size), 8, false}, {"kmalloc_node", 1, 2, int32(size), 8, true}} {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "page_virt", Type: ebpf.RawTracepoint, License: "GPL",
			Instructions: recordInsns(pair, tid, tp.arg, tp.test, tp.want, tp.at)})
		if err != nil {
			return 0, 0, fmt.Errorf("raw tracepoint %s: %w", tp.name, err)
		}
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: tp.name, Program: prog})
		prog.Close()
		if err != nil && tp.optional {
			continue
		}
		if err != nil {
			return 0, 0, fmt.Errorf("raw tracepoint %s: %w", tp.name, err)
		}
		defer l.Close()
	}
	buf := make([]byte, size)
	for try := 0; try < 3; try++ {
		unix.Getxattr("/", "user.skbtrace", buf)
		var v [2]uint64
		if err := pair.Lookup(uint32(0), &v); err != nil {
			return 0, 0, err
		}
		if v[1] == 0 {
			continue
		}
		if v[1]%pageSize != 0 || v[0]%uint64(page.Size) != 0 {
			return 0, 0, fmt.Errorf("a kmalloc of pages at %#x from page %#x: not a page and its struct", v[1], v[0])
		}
		return mul, v[1] - v[0]*mul, nil
	}
	return 0, 0, fmt.Errorf("getxattr's %d KiB buffer was not seen allocated from pages", size/1024)
}

// recordInsns is the program of PageVirt's raw tracepoints: on the thread
// tid, where argument test is want, argument arg goes to the pair at at;
// the page (at 0) every time, the address (at 8) once, after a page.
func recordInsns(pair *ebpf.Map, tid int32, arg, test int16, want int32, at int16) asm.Instructions {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.JNE.Imm32(asm.R0, tid, "out"),
		asm.LoadMem(asm.R1, asm.R6, 8*test, asm.DWord),
		asm.JNE.Imm32(asm.R1, want, "out"),
		asm.StoreImm(asm.RFP, -8, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, pair.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
	}
	if at == 8 {
		insns = append(insns,
			asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
			asm.JNE.Imm(asm.R1, 0, "out"),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.JEq.Imm(asm.R1, 0, "out"),
		)
	}
	return append(insns,
		asm.LoadMem(asm.R1, asm.R6, 8*arg, asm.DWord),
		asm.StoreMem(asm.R0, at, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
}
