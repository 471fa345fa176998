package kernel

import (
	"testing"
)

// TestDiscoverFindsSkbFunctions checks discovery against this kernel: the
// functions every network stack has, with their skb's position as their
// prototypes put it, and none that lacks an skb.
func TestDiscoverFindsSkbFunctions(t *testing.T) {
	d, err := DiscoverSkbFuncs("")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Funcs) < 500 {
		t.Errorf("only %d functions with an skb; SPEC expects about 1,500-2,500", len(d.Funcs))
	}
	want := map[string]int{"ip_rcv": 0, "ip_rcv_finish": 2, "__dev_queue_xmit": 0, "tcp_v4_rcv": 0, "kfree_skbmem": 0, "ip_finish_output2": 2, "sk_skb_reason_drop": 1}
	// The drop reason's position: sk_skb_reason_drop(sk, skb, reason).
	wantReason := map[string]int{"sk_skb_reason_drop": 2, "ip_rcv": -1, "kfree_skbmem": -1}
	for _, f := range d.Funcs {
		if pos, ok := want[f.Name]; ok {
			if f.SkbArg != pos {
				t.Errorf("%s: skb at %d, want %d", f.Name, f.SkbArg, pos)
			}
			delete(want, f.Name)
		}
		if pos, ok := wantReason[f.Name]; ok && f.ReasonArg != pos {
			t.Errorf("%s: drop reason at %d, want %d", f.Name, f.ReasonArg, pos)
		}
		if f.Name == "tcp_sendmsg" || f.Name == "sock_sendmsg" {
			t.Errorf("%s has no sk_buff parameter but was found", f.Name)
		}
	}
	for name := range want {
		t.Errorf("%s not found", name)
	}
	if got := d.Match("ip_rcv*"); len(got) < 2 || got[0].Name != "ip_rcv" {
		t.Errorf("Match(ip_rcv*) = %v", got)
	}
}

// TestSkbTracepointsHaveReasons checks the fallback's targets: the skb's
// and the drop reason's positions on tracepoints that carry them.
func TestSkbTracepointsHaveReasons(t *testing.T) {
	spec, err := BTF()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tg := range SkbTracepoints(spec, new(Symbols)) {
		switch tg.Name {
		case "kfree_skb": // (skb, location, reason, rx_sk)
			found++
			if tg.SkbArg != 0 || !tg.HasReason || tg.ReasonArg != 2 {
				t.Errorf("kfree_skb: skb at %d, reason %v at %d; want 0, true at 2", tg.SkbArg, tg.HasReason, tg.ReasonArg)
			}
		case "consume_skb", "net_dev_queue":
			found++
			if tg.HasReason {
				t.Errorf("%s has no drop reason, but one was found at %d", tg.Name, tg.ReasonArg)
			}
		}
	}
	if found != 3 {
		t.Errorf("found %d of kfree_skb, consume_skb, net_dev_queue", found)
	}
}

// TestDiscoveryCacheRoundTrips checks that the cache gives back exactly
// what discovery found, and is used the second time.
func TestDiscoveryCacheRoundTrips(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	d1, cached, err := CachedDiscovery("")
	if err != nil || cached {
		t.Fatalf("first: cached=%v err=%v", cached, err)
	}
	d2, cached, err := CachedDiscovery("")
	if err != nil || !cached {
		t.Fatalf("second: cached=%v err=%v", cached, err)
	}
	if len(d1.Funcs) != len(d2.Funcs) || d1.Untraceable != d2.Untraceable || d1.Source != d2.Source {
		t.Fatalf("cache differs: %d/%d funcs", len(d1.Funcs), len(d2.Funcs))
	}
	for i := range d1.Funcs {
		if d1.Funcs[i] != d2.Funcs[i] {
			t.Fatalf("func %d: %+v vs %+v", i, d1.Funcs[i], d2.Funcs[i])
		}
	}
}

// BenchmarkDiscovery measures discovery without the cache.
func BenchmarkDiscovery(b *testing.B) {
	for b.Loop() {
		if _, err := DiscoverSkbFuncs(""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiscoveryCached measures discovery from the cache, as every run
// after the first on a kernel build does.
func BenchmarkDiscoveryCached(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	if _, _, err := CachedDiscovery(""); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, cached, err := CachedDiscovery(""); err != nil || !cached {
			b.Fatal(cached, err)
		}
	}
}

// TestDiscoverReturnClasses checks what skbret: reads of each function
// against this kernel's prototypes: ip_rcv_core returns the skb (a
// pointer), nf_hook_slow an int, kfree_skbmem nothing, skb_defer_rx_timestamp
// a bool; and the number of parameters, which an fexit program's return
// value follows.
func TestDiscoverReturnClasses(t *testing.T) {
	d, err := DiscoverSkbFuncs("")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ip_rcv_core": "ptr", "nf_hook_slow": "s32", "kfree_skbmem": "void", "skb_defer_rx_timestamp": "u8", "ip_rcv": "s32"}
	nargs := map[string]int{"ip_rcv_core": 2, "nf_hook_slow": 4, "kfree_skbmem": 1, "ip_rcv": 4}
	for _, f := range d.Funcs {
		if rc, ok := want[f.Name]; ok {
			if f.Ret.String() != rc {
				t.Errorf("%s returns %s, want %s", f.Name, f.Ret, rc)
			}
			delete(want, f.Name)
		}
		if n, ok := nargs[f.Name]; ok && f.NArgs != n {
			t.Errorf("%s has %d parameters, want %d", f.Name, f.NArgs, n)
		}
	}
	for name := range want {
		t.Errorf("%s not found", name)
	}
}
