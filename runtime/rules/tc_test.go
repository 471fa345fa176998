package rules

import (
	"strings"
	"testing"
)

// tcJSON is tc -s -j filter show's output for a u32 filter with a mirred
// action (captured on this project's host), its drop count made n.
func tcJSON(drops string) []byte {
	return []byte(`[{"protocol":"ip","pref":30,"kind":"u32","chain":0},{"protocol":"ip","pref":30,"kind":"u32","chain":0,"options":{"fh":"800:","ht_divisor":1}},{"protocol":"ip","pref":30,"kind":"u32","chain":0,"options":{"fh":"800::800","order":2048,"key_ht":"800","bkt":"0","not_in_hw":true,"match":{"value":"110000","mask":"ff0000","offmask":"","off":8},"actions":[{"order":1,"kind":"mirred","mirred_action":"redirect","direction":"egress","to_dev":"va","control_action":{"type":"stolen"},"index":1,"ref":1,"bind":1,"stats":{"bytes":0,"packets":0,"drops":` + drops + `,"overlimits":0,"requeues":0,"backlog":0,"qlen":0}}]}}]`)
}

// TestTCActionCredits: an action is named once for each drop its counter
// rose by since the last read, and never where none rose.
func TestTCActionCredits(t *testing.T) {
	var tc tcActs
	read := func(drops string) []tcAction {
		acts, err := parseTCFilters(tcJSON(drops), "v2", "ingress", "clsact")
		if err != nil {
			t.Fatal(err)
		}
		return acts
	}
	acts := read("3")
	if len(acts) != 1 || acts[0].action != "mirred (egress redirect to device va) stolen" || acts[0].handle != "800::800" || acts[0].pref != 30 || acts[0].kind != "u32" || acts[0].protocol != "ip" {
		t.Fatalf("actions %+v", acts)
	}
	tc.update("1", acts) // the first read: counts, no credit
	if _, n := tc.credited("1", read("3")); n != 0 {
		t.Fatalf("%d actions credited with no drop since", n)
	}
	// Two drops since: named twice, then no more.
	for i := 0; i < 2; i++ {
		a, n := tc.credited("1", read("5"))
		if n != 1 || !strings.HasPrefix(a.key, "v2/ingress/30/0/u32/800::800/1/mirred/1") {
			t.Fatalf("drop %d: %d actions credited (%+v)", i, n, a)
		}
	}
	if _, n := tc.credited("1", read("5")); n != 0 {
		t.Fatalf("a third drop named with two counted")
	}
	if _, err := parseTCFilters([]byte("not json"), "v2", "ingress", "clsact"); err == nil {
		t.Fatal("bad tc output read without an error")
	}
}
