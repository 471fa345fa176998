package check_test

import (
	"slices"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// TestConfigApplied checks what a config block sets: missing_probes drops
// the specs and probes this kernel does not have (warn with a note each,
// ignore silently) from the script Prune returns, the one checked
// unchanged, print_maps_on_exit and max_cat_bytes are recorded, and a
// variable skbtrace has no use for is a note.
func TestConfigApplied(t *testing.T) {
	const probes = `
kprobe:tcp_v4_rcv, kprobe:no_such_function_skbtrace { @n = count() }
tracepoint:skb:no_such_tracepoint { @m = count() }
`
	for _, tc := range []struct {
		config  string
		probes  int // probes left
		specs   int // specs of the first
		notes   []string
		missing string
		maps    bool
		cat     int
	}{
		{config: ``, probes: -1},
		{config: `config = { missing_probes = "error" }`, probes: -1},
		{config: `config = { missing_probes = "ignore" }`, probes: 1, specs: 1, missing: check.MissingIgnore, maps: true, cat: check.DefaultMaxCatBytes},
		{config: `config = { missing_probes = warn; print_maps_on_exit = false; max_cat_bytes = 512; max_map_keys = 2 }`, probes: 1, specs: 1,
			missing: check.MissingWarn, cat: 512, notes: []string{
				"config: max_map_keys = 2 has no effect: each map of skbtrace holds up to 10240 keys",
				"kprobe:no_such_function_skbtrace: this kernel has no function no_such_function_skbtrace; skipped (missing_probes = warn)",
				"tracepoint:skb:no_such_tracepoint: this kernel has no tracepoint skb:no_such_tracepoint; skipped (missing_probes = warn)",
			}},
	} {
		t.Run(tc.config, func(t *testing.T) {
			script, err := lang.Parse(&lang.Source{Name: "config.bt", Text: tc.config + probes})
			if err != nil {
				t.Fatal(err)
			}
			opts := check.Options{BTF: kernelBTF(t)}
			info, err := check.Check(script, opts)
			if tc.probes < 0 {
				if err == nil {
					t.Fatal("a missing probe was accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pruned, info, err := check.Prune(script, info, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(script.Probes) != 2 || len(script.Probes[0].Specs) != 2 {
				t.Errorf("the script checked has %d probes, the first with %d specs, now; want 2 and 2, as parsed", len(script.Probes), len(script.Probes[0].Specs))
			}
			if len(pruned.Probes) != tc.probes || len(pruned.Probes[0].Specs) != tc.specs || pruned.Probes[0].Specs[0].Target != "tcp_v4_rcv" {
				t.Errorf("left %d probes, the first with %d specs; want %d and %d", len(pruned.Probes), len(pruned.Probes[0].Specs), tc.probes, tc.specs)
			}
			if !slices.Equal(info.Notes, tc.notes) {
				t.Errorf("notes %q, want %q", info.Notes, tc.notes)
			}
			want := check.Config{MissingProbes: tc.missing, PrintMapsOnExit: tc.maps, MaxCatBytes: tc.cat}
			if info.Config != want {
				t.Errorf("config %+v, want %+v", info.Config, want)
			}
		})
	}
}
