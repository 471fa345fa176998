package kernel

import (
	"bufio"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// kernelSyms is the process's first reading of /proc/kallsyms: the
// tracepoint fallback's discovery and the printer's function names share
// it, so a script on the fallback that prints func does not read the
// 200,000 lines again at its first event, while its records pile up. It
// has no BPF programs loaded after it was read.
var kernelSyms Symbols

// Kallsyms returns the process's shared reading of /proc/kallsyms, read
// on first use.
func Kallsyms() *Symbols { return &kernelSyms }

// Symbols resolves kernel addresses to symbol names from /proc/kallsyms.
// The zero value reads it once, on first use: only scripts that print func
// or ksym() pay for it. A reading made later than Kallsyms' shows the BPF
// programs loaded since (stacks).
type Symbols struct {
	once  sync.Once
	addrs []uint64
	names []string
}

// NewSymbols returns a table of the given symbols instead of kallsyms':
// addrs sorted, names[i] at addrs[i].
func NewSymbols(addrs []uint64, names []string) *Symbols {
	k := &Symbols{addrs: addrs, names: names}
	k.once.Do(func() {})
	return k
}

func (k *Symbols) load() {
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

// Name returns the symbol containing addr, with +0xOFF when inside it, or
// the address in hex when unknown.
func (k *Symbols) Name(addr uint64) string { return k.Symbolize(addr, 16) }

// Symbolize names an address as NAME+OFFSET, the offset in hex (0x90) or,
// as bpftrace prints stacks, in decimal (144).
func (k *Symbols) Symbolize(addr uint64, base int) string {
	k.once.Do(k.load)
	i := sort.Search(len(k.addrs), func(i int) bool { return k.addrs[i] > addr }) - 1
	if i < 0 || addr == 0 {
		return "0x" + strconv.FormatUint(addr, 16)
	}
	// A tracepoint fallback's func is its __traceiter_NAME: show NAME.
	name := strings.TrimPrefix(k.names[i], "__traceiter_")
	if off := addr - k.addrs[i]; off != 0 {
		if base == 10 {
			return name + "+" + strconv.FormatUint(off, 10)
		}
		return name + "+0x" + strconv.FormatUint(off, 16)
	}
	return name
}

// ksymsByName serves KsymAddr, from kernelSyms.
var ksymsByName struct {
	once sync.Once
	m    map[string]uint64
}

// KsymAddr returns the address of a kernel function from /proc/kallsyms, 0
// if it has none (or kallsyms hides addresses).
func KsymAddr(name string) uint64 {
	b := &ksymsByName
	b.once.Do(func() {
		k := &kernelSyms
		k.once.Do(k.load)
		b.m = make(map[string]uint64, len(k.names))
		for i, n := range k.names {
			if _, dup := b.m[n]; !dup {
				b.m[n] = k.addrs[i]
			}
		}
	})
	return b.m[name]
}
