package stdlib

import (
	"strconv"
	"strings"
)

// gfpName is one name printf's %gr gives a set of GFP flag bits.
type gfpName struct {
	name string
	mask uint64
}

// gfpComposites are the kernel's compound GFP masks (include/linux/gfp_types.h),
// tried first and in this order, as bpftrace 0.26's %gr does: the largest
// that a value holds whole is named and its bits taken out.
var gfpComposites = []gfpName{
	{"GFP_TRANSHUGE", 0x21c24ca},
	{"GFP_TRANSHUGE_LIGHT", 0x21c20ca},
	{"GFP_HIGHUSER_MOVABLE", 0x2100cca},
	{"GFP_HIGHUSER", 0x100cc2},
	{"GFP_USER", 0x100cc0},
	{"GFP_KERNEL_ACCOUNT", 0x400cc0},
	{"GFP_KERNEL", 0xcc0},
	{"GFP_NOFS", 0xc40},
	{"GFP_ATOMIC", 0x820},
	{"GFP_NOIO", 0xc00},
	{"GFP_NOWAIT", 0x2800},
}

// gfpBits names the single GFP bits in bit order (the layout of Linux
// 6.10 on, with CONFIG_KASAN_HW_TAGS and CONFIG_SLAB_OBJ_EXT, which
// bpftrace assumes); bits 3, 4 and 9 (__GFP_MOVABLE, __GFP_RECLAIMABLE,
// unused) have no name of their own there and print in the hex rest.
var gfpBits = []gfpName{
	{"GFP_DMA", 1 << 0},
	{"__GFP_HIGHMEM", 1 << 1},
	{"GFP_DMA32", 1 << 2},
	{"__GFP_HIGH", 1 << 5},
	{"__GFP_IO", 1 << 6},
	{"__GFP_FS", 1 << 7},
	{"__GFP_ZERO", 1 << 8},
	{"__GFP_DIRECT_RECLAIM", 1 << 10},
	{"__GFP_KSWAPD_RECLAIM", 1 << 11},
	{"__GFP_WRITE", 1 << 12},
	{"__GFP_NOWARN", 1 << 13},
	{"__GFP_RETRY_MAYFAIL", 1 << 14},
	{"__GFP_NOFAIL", 1 << 15},
	{"__GFP_NORETRY", 1 << 16},
	{"__GFP_MEMALLOC", 1 << 17},
	{"__GFP_COMP", 1 << 18},
	{"__GFP_NOMEMALLOC", 1 << 19},
	{"__GFP_HARDWALL", 1 << 20},
	{"__GFP_THISNODE", 1 << 21},
	{"__GFP_ACCOUNT", 1 << 22},
	{"__GFP_ZEROTAGS", 1 << 23},
	{"__GFP_SKIP_ZERO", 1 << 24},
	{"__GFP_SKIP_KASAN", 1 << 25},
	{"__GFP_NO_OBJ_EXT", 1 << 26},
}

// AppendGFPFlags appends printf's %gr of v, GFP flags as bpftrace 0.26
// prints them (like the kernel's %pGg): compound names, then single bits,
// joined by |, the bits without a name last in hex; 0 for none.
// 0xcc0 is GFP_KERNEL, 0x2820 GFP_ATOMIC|__GFP_NOWARN, 0x18 0x18.
func AppendGFPFlags(dst []byte, v uint64) []byte {
	if v == 0 {
		return append(dst, '0')
	}
	start := len(dst)
	sep := func() {
		if len(dst) > start {
			dst = append(dst, '|')
		}
	}
	for _, tables := range [][]gfpName{gfpComposites, gfpBits} {
		for _, g := range tables {
			if v&g.mask == g.mask {
				sep()
				dst = append(dst, g.name...)
				v &^= g.mask
			}
		}
	}
	if v != 0 {
		sep()
		dst = strconv.AppendUint(append(dst, "0x"...), v, 16)
	}
	return dst
}

// GFPFlags is AppendGFPFlags as a string.
func GFPFlags(v uint64) string { return string(AppendGFPFlags(nil, v)) }

// isGFPVerb says whether the conversion at f[i] ('g') is bpftrace's %gr.
func isGFPVerb(f string, i int) bool {
	return f[i] == 'g' && strings.HasPrefix(f[i+1:], "r")
}
