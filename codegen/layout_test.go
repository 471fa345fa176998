package codegen_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// TestMapLayouts checks each map's layout as Compile gives it: in the
// order the script names them, with their kinds, keys (names, types,
// offsets), key and value sizes and lhist bounds, and that the kernel map
// it names is the one the programs use, of those sizes; then loads the
// programs.
func TestMapLayouts(t *testing.T) {
	out := compile(t, `tracepoint:skb:kfree_skb {
	@drops[reason, skb->protocol] = count();
	@bytes[comm] = sum(len);
	@lo = min(len); @hi[cpu] = max(len); @mean = avg(len); @all = stats(len);
	@h[comm, cpu] = hist(len);
	@l = lhist(len, 0, 1500, 100);
	@last[(cpu, pid)] = comm;
	$t = (cpu, reason);
	@byt[$t] = count();
	@ = count();
}`)
	type key struct {
		name   string
		kind   types.Kind
		offset int
		size   int
	}
	want := []struct {
		name      string
		kind      codegen.MapKind
		keys      []key
		keySize   int
		valueSize int
		lhist     *[3]int64
	}{
		{"drops", codegen.MapCount, []key{{"reason", types.Int, 0, 8}, {"skb->protocol", types.Int, 8, 8}}, 16, 8, nil},
		{"bytes", codegen.MapSum, []key{{"comm", types.String, 0, 16}}, 16, 8, nil},
		{"lo", codegen.MapMin, nil, 8, 16, nil},
		{"hi", codegen.MapMax, []key{{"cpu", types.Int, 0, 8}}, 8, 16, nil},
		{"mean", codegen.MapAvg, nil, 8, 16, nil},
		{"all", codegen.MapStats, nil, 8, 16, nil},
		{"h", codegen.MapHist, []key{{"comm", types.String, 0, 16}, {"cpu", types.Int, 16, 8}}, 32, 8, nil},
		{"l", codegen.MapLhist, nil, 8, 8, &[3]int64{0, 1500, 100}},
		{"last", codegen.MapValue, []key{{"cpu", types.Int, 0, 8}, {"pid", types.Int, 8, 8}}, 16, 16, nil},
		{"byt", codegen.MapCount, []key{{"$t.0", types.Int, 0, 8}, {"$t.1", types.Int, 8, 8}}, 16, 8, nil},
		{"", codegen.MapCount, nil, 8, 8, nil},
	}
	if len(out.MapLayouts) != len(want) {
		t.Fatalf("%d layouts, want %d", len(out.MapLayouts), len(want))
	}
	for i, w := range want {
		l := out.MapLayouts[i]
		if l.Name != w.name || l.Kind != w.kind || l.KeySize != w.keySize || l.ValueSize != w.valueSize || len(l.Keys) != len(w.keys) {
			t.Errorf("@%s: %s, key %d bytes, value %d, %d keys; want @%s %s, %d, %d, %d keys",
				l.Name, l.Kind, l.KeySize, l.ValueSize, len(l.Keys), w.name, w.kind, w.keySize, w.valueSize, len(w.keys))
			continue
		}
		for j, k := range w.keys {
			got := l.Keys[j]
			if got.Name != k.name || got.Type.Kind != k.kind || got.Offset != k.offset || got.Size != k.size {
				t.Errorf("@%s key %d: %q %v at %d, %d bytes; want %q %v at %d, %d", w.name, j, got.Name, got.Type, got.Offset, got.Size, k.name, k.kind, k.offset, k.size)
			}
		}
		if (l.Lhist == nil) != (w.lhist == nil) || l.Lhist != nil && *l.Lhist != *w.lhist {
			t.Errorf("@%s: lhist %v, want %v", w.name, l.Lhist, w.lhist)
		}
		if l.Slot != nil {
			t.Errorf("@%s packed in %v with %d keyless aggregations", w.name, *l.Slot, 5)
		}
		if out.Layout(w.name) != l {
			t.Errorf("Layout(%q) is not the layout of @%s", w.name, w.name)
		}
		spec := out.Maps[l.KernelMap()]
		if spec == nil || int(spec.KeySize) != l.KeySize || int(spec.ValueSize) != l.ValueSize {
			t.Errorf("@%s: kernel map %s is %+v", w.name, l.KernelMap(), spec)
		}
	}
	if out.Layout("nosuch") != nil {
		t.Error("Layout finds a map the script does not have")
	}
	load(t, out)
}

// TestMapLayoutsPacked: past 16 keyless aggregations each has its slot in
// the map of its value size, numbered in script order; a script compiled
// after it with few has none (no layout kept from one script to the next).
func TestMapLayoutsPacked(t *testing.T) {
	var b strings.Builder
	b.WriteString("tracepoint:skb:kfree_skb { ")
	for i := range 20 {
		fmt.Fprintf(&b, "@c%d = count(); @m%d = max(len); ", i, i)
	}
	b.WriteString("@k[cpu] = count(); @h = hist(len); }")
	out := compile(t, b.String())
	for i := range 20 {
		for _, c := range []struct {
			name, phys string
		}{{fmt.Sprintf("c%d", i), "keyless8"}, {fmt.Sprintf("m%d", i), "keyless16"}} {
			l := out.Layout(c.name)
			if l == nil || l.Slot == nil || *l.Slot != (codegen.PackedSlot{Map: c.phys, Index: uint64(i)}) || l.KernelMap() != c.phys {
				t.Errorf("@%s: %+v, want slot %d of %s", c.name, l, i, c.phys)
			}
		}
	}
	for _, name := range []string{"k", "h"} {
		if l := out.Layout(name); l.Slot != nil || l.KernelMap() != codegen.MapName(name) {
			t.Errorf("@%s is packed: %+v", name, l.Slot)
		}
	}
	load(t, out)

	few := compile(t, "tracepoint:skb:kfree_skb { @c0 = count(); @m0 = max(len) }")
	for _, l := range few.MapLayouts {
		if l.Slot != nil {
			t.Errorf("@%s of a script of two maps is packed: %+v", l.Name, *l.Slot)
		}
	}
}

// TestMapLayoutBucket checks the values each histogram bucket counts, as
// the programs bucket them: hist's powers of two, lhist's steps with the
// last one cut at max.
func TestMapLayoutBucket(t *testing.T) {
	hist := &codegen.MapLayout{Kind: codegen.MapHist}
	lhist := &codegen.MapLayout{Kind: codegen.MapLhist, Lhist: &[3]int64{0, 250, 100}}
	for _, c := range []struct {
		l      *codegen.MapLayout
		i      int64
		lo, hi int64
	}{
		{hist, 0, math.MinInt64, 0}, {hist, 1, 0, 1}, {hist, 2, 1, 2}, {hist, 3, 2, 4}, {hist, 12, 1024, 2048},
		{hist, 64, 1 << 62, math.MaxInt64},
		{lhist, 0, math.MinInt64, 0}, {lhist, 1, 0, 100}, {lhist, 2, 100, 200}, {lhist, 3, 200, 250}, {lhist, 4, 250, math.MaxInt64},
	} {
		if lo, hi := c.l.Bucket(c.i); lo != c.lo || hi != c.hi {
			t.Errorf("%s bucket %d: [%d, %d), want [%d, %d)", c.l.Kind, c.i, lo, hi, c.lo, c.hi)
		}
	}
}
