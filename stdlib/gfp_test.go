package stdlib

import "testing"

// The values and texts are what sid's bpftrace (0.27.1, whose %gr is
// 0.26's) printed for printf("%gr") on this host.
func TestGFPFlags(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want string
	}{
		{0, "0"},
		{0xcc0, "GFP_KERNEL"},
		{0x2800, "GFP_NOWAIT"},
		{0x100cc0, "GFP_USER"},
		{0x820, "GFP_ATOMIC"},
		{0x2820, "GFP_ATOMIC|__GFP_NOWARN"},
		{0xc20, "GFP_ATOMIC|__GFP_DIRECT_RECLAIM"},
		{0x2c00, "GFP_NOIO|__GFP_NOWARN"},
		{0xc60, "GFP_NOFS|__GFP_HIGH"},
		{0x500cc0, "GFP_USER|__GFP_ACCOUNT"},
		{0xcc1, "GFP_KERNEL|GFP_DMA"},
		{0x5, "GFP_DMA|GFP_DMA32"},
		{0x100cca, "GFP_HIGHUSER|0x8"},
		{0x2100cc2, "GFP_HIGHUSER|__GFP_SKIP_KASAN"},
		{0x21c24ca, "GFP_TRANSHUGE"},
		{0x21c20ca, "GFP_TRANSHUGE_LIGHT"},
		{0x18, "0x18"},
		{0x80000cc0, "GFP_KERNEL|0x80000000"},
		{0x3ffffff, "GFP_TRANSHUGE|GFP_ATOMIC|GFP_DMA|GFP_DMA32|__GFP_ZERO|__GFP_WRITE|__GFP_RETRY_MAYFAIL|__GFP_NOFAIL|__GFP_NORETRY|__GFP_MEMALLOC|__GFP_THISNODE|__GFP_ACCOUNT|__GFP_ZEROTAGS|__GFP_SKIP_ZERO|0x210"},
	} {
		if got := GFPFlags(c.v); got != c.want {
			t.Errorf("%%gr of %#x = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestParseFormatGFP(t *testing.T) {
	vs, err := ParseFormat("a %gr b %g r %5gr")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 || vs[0].Conv != 'g' || vs[0].Raw != 'r' || vs[1].Raw != 0 || vs[1].Text != " b " || vs[2].Raw != 'r' || vs[2].Flags != "5" || vs[2].Text != " r " {
		t.Fatalf("verbs %+v", vs)
	}
}
