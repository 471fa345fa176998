package main

import (
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/internal/testkit"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
)

// TestBTFCacheChangesNothing dumps scripts (-d: the tree, the generated
// instructions, the verifier's count) with no BTF cache, then with a cache
// that holds their names, then with one that holds another script's names
// only (checked twice: with the cache, then the whole BTF), with has() and
// --filter too (the script is not parsed again): the output is the same
// each time, and the cache learns the
// names of each script checked against the whole BTF.
func TestBTFCacheChangesNothing(t *testing.T) {
	testkit.KernelBTF(t)
	// A tp_btf program (loaded by the cached type ID of its target), a
	// classic tracepoint's, a kprobe's.
	scripts := []string{
		`tracepoint:skb:kfree_skb { @[reason] = count() }`,
		`tracepoint:skb:kfree_skb { @[args.protocol] = count() }`,
		`kprobe:tcp_v4_rcv { @[curtask->pid, ((struct sk_buff *)arg0)->len] = count() }`,
	}
	dump := func(script string, flags ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, append(append([]string{"-d"}, flags...), "-e", script)...)
		if code != 0 {
			t.Fatalf("%s: exit status %d: %s", script, code, errs)
		}
		return out
	}
	holds := func(script string) bool {
		t.Helper()
		cached, err := kernel.LoadCachedTypes()
		if err != nil {
			return false
		}
		s, err := lang.Parse(&lang.Source{Name: "-e", Text: script})
		if err != nil {
			t.Fatal(err)
		}
		check.Check(s, pipeline.CheckOptions(cached, nil, nil))
		return !cached.Missed()
	}
	want := map[string]string{}
	for _, s := range scripts {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		want[s] = dump(s)
		if !holds(s) {
			t.Fatalf("%s: the cache does not hold the script's names after a run", s)
		}
		if got := dump(s); got != want[s] {
			t.Errorf("%s: dumped through the cache:\n%s\nwant, without it:\n%s", s, got, want[s])
		}
	}
	// A cache that holds the first script's names, not the last's.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	first, last := scripts[0], scripts[len(scripts)-1]
	dump(first)
	if holds(last) {
		t.Fatalf("the cache holds %s before it ran", last)
	}
	if got := dump(last); got != want[last] {
		t.Errorf("%s: dumped after the cache missed:\n%s\nwant:\n%s", last, got, want[last])
	}
	if !holds(first) || !holds(last) {
		t.Error("the cache did not add the last script's names to the first's")
	}
	// With --filter, and has(), after the cache missed: the same dump,
	// the has() pruned and one pcap() ANDed in.
	withHas := `kprobe:tcp_v4_rcv /has("tracepoint:skb:kfree_skb") && arg0 != 0/ { if (has(args.skb)) { @[len] = count() } }`
	for _, script := range []string{last, withHas} {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		want := dump(script, "--filter", "tcp")
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		dump(first)
		if holds(script) {
			t.Fatalf("the cache holds %s before it ran", script)
		}
		if got := dump(script, "--filter", "tcp"); got != want {
			t.Errorf("%s --filter tcp: dumped after the cache missed:\n%s\nwant:\n%s", script, got, want)
		}
		if n := strings.Count(want, "Call pcap"); n != 1 || strings.Contains(want, "Call has") {
			t.Errorf("%s --filter tcp: the tree has %d pcap() and has() %v, want one pcap() and no has():\n%s", script, n, strings.Contains(want, "Call has"), want)
		}
	}
}
