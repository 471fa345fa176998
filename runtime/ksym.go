package runtime

import (
	"bufio"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// ksyms resolves kernel addresses to symbol names from /proc/kallsyms. It is
// read once, on first use: only scripts that print func or ksym() pay for it.
type ksyms struct {
	once  sync.Once
	addrs []uint64
	names []string
}

func (k *ksyms) load() {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		switch fields[1] {
		case "t", "T", "w", "W":
		default:
			continue
		}
		a, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || a == 0 {
			continue
		}
		k.addrs = append(k.addrs, a)
		k.names = append(k.names, fields[2])
	}
	idx := make([]int, len(k.addrs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return k.addrs[idx[a]] < k.addrs[idx[b]] })
	addrs, names := make([]uint64, len(idx)), make([]string, len(idx))
	for i, j := range idx {
		addrs[i], names[i] = k.addrs[j], k.names[j]
	}
	k.addrs, k.names = addrs, names
}

// name returns the symbol containing addr, with +0xOFF when inside it, or
// the address in hex when unknown.
func (k *ksyms) name(addr uint64) string {
	k.once.Do(k.load)
	i := sort.Search(len(k.addrs), func(i int) bool { return k.addrs[i] > addr }) - 1
	if i < 0 || addr == 0 {
		return "0x" + strconv.FormatUint(addr, 16)
	}
	// A tracepoint fallback's func is its __traceiter_NAME: show NAME.
	name := strings.TrimPrefix(k.names[i], "__traceiter_")
	if off := addr - k.addrs[i]; off != 0 {
		return name + "+0x" + strconv.FormatUint(off, 16)
	}
	return name
}
