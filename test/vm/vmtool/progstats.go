package main

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"unsafe"
)

// progStats prints what the kernel's BPF run-time statistics
// (kernel.bpf_stats_enabled) counted for every loaded program, summed: runs,
// nanoseconds and recursion misses, and the number of programs. bench/vm's
// scripts read it before and after a flood to find the programs' own share
// of a packet's cost.
func progStats() int {
	var runs, ns, misses uint64
	progs := 0
	var attr [4]uint32 // start_id, next_id, open_flags
	for {
		if _, _, e := syscall.Syscall(sysBPF, bpfProgGetNextID, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr)); e != 0 {
			break
		}
		attr[0] = attr[1]
		info, ok := progInfo(attr[1])
		if !ok {
			continue
		}
		progs++
		ns += binary.LittleEndian.Uint64(info[192:])
		runs += binary.LittleEndian.Uint64(info[200:])
		misses += binary.LittleEndian.Uint64(info[208:])
	}
	fmt.Printf("progs=%d runs=%d ns=%d misses=%d\n", progs, runs, ns, misses)
	return 0
}

const (
	bpfProgGetFDByID  = 13
	bpfObjGetInfoByFD = 15
)

// progInfo reads struct bpf_prog_info of the program with this ID, as far as
// recursion_misses (216 bytes; a kernel before 5.12 leaves what it lacks zero).
func progInfo(id uint32) ([]byte, bool) {
	idAttr := [3]uint32{id}
	fd, _, e := syscall.Syscall(sysBPF, bpfProgGetFDByID, uintptr(unsafe.Pointer(&idAttr[0])), unsafe.Sizeof(idAttr))
	if e != 0 {
		return nil, false
	}
	defer syscall.Close(int(fd))
	info := make([]byte, 216)
	// bpf_fd, info_len, info
	var get struct {
		fd, len uint32
		info    uint64
	}
	get.fd, get.len, get.info = uint32(fd), uint32(len(info)), uint64(uintptr(unsafe.Pointer(&info[0])))
	_, _, e = syscall.Syscall(sysBPF, bpfObjGetInfoByFD, uintptr(unsafe.Pointer(&get)), unsafe.Sizeof(get))
	return info, e == 0
}
