package attach

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// VmlinuxPath is the kernel image whose symbol table sizes functions for
// kprobe:FN+OFFSET (bpftrace's BPFTRACE_VMLINUX); where it is empty the
// size is the distance to the next symbol in /proc/kallsyms.
var VmlinuxPath string

// checkKprobeOffset refuses an offset past the end of fn, as bpftrace
// does; whether it starts an instruction the kernel checks as it attaches.
func checkKprobeOffset(fn string, off uint64) error {
	size, src, err := funcSize(fn)
	if err != nil {
		// Without a size the kernel's own checks decide.
		return nil
	}
	if off >= size {
		return fmt.Errorf("offset %d is outside %s, which is %d bytes long (%s)", off, fn, size, src)
	}
	return nil
}

// funcSize is fn's size in bytes and where it was read.
func funcSize(fn string) (uint64, string, error) {
	if VmlinuxPath != "" {
		f, err := elf.Open(VmlinuxPath)
		if err != nil {
			return 0, "", err
		}
		defer f.Close()
		syms, err := f.Symbols()
		if err != nil {
			return 0, "", err
		}
		for _, s := range syms {
			if s.Name == fn && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				return s.Size, VmlinuxPath + "'s symbol table", nil
			}
		}
		return 0, "", fmt.Errorf("%s has no function %s", VmlinuxPath, fn)
	}
	return kallsymsSize(fn)
}

// kallsymsSize is the distance from fn to the next higher address in
// /proc/kallsyms: an upper bound of its size (padding included).
func kallsymsSize(fn string) (uint64, string, error) {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	var addrs []uint64
	var at uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		a, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || a == 0 {
			continue
		}
		addrs = append(addrs, a)
		if fields[2] == fn && at == 0 {
			at = a
		}
	}
	if at == 0 {
		return 0, "", fmt.Errorf("/proc/kallsyms has no %s", fn)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	i := sort.Search(len(addrs), func(i int) bool { return addrs[i] > at })
	if i == len(addrs) {
		return 0, "", fmt.Errorf("no symbol after %s", fn)
	}
	return addrs[i] - at, "to the next symbol in /proc/kallsyms", nil
}
