package kernel

import (
	"slices"
	"testing"
)

// TestTraceableNames parses both sources of traceable functions: tracefs'
// list (module names after the function, static duplicates) and kallsyms'
// text symbols (data symbols, local .isra/.cold copies left out), and
// leaves the tracepoints' machinery out.
func TestTraceableNames(t *testing.T) {
	ftrace := "tcp_v4_rcv\nip_rcv\nbr_handle_frame [bridge]\nip_rcv\n__traceiter_kfree_skb\n"
	if got, want := traceableNames([]byte(ftrace), false), []string{"br_handle_frame", "ip_rcv", "tcp_v4_rcv"}; !slices.Equal(got, want) {
		t.Errorf("available_filter_functions: %v, want %v", got, want)
	}
	kallsyms := "ffffffff81000000 T ip_rcv\nffffffff82000000 D init_net\nffffffff81000100 t tcp_v4_rcv.cold\nffffffff81000200 t udp_rcv\t[udp]\n"
	if got, want := traceableNames([]byte(kallsyms), true), []string{"ip_rcv", "udp_rcv"}; !slices.Equal(got, want) {
		t.Errorf("kallsyms: %v, want %v", got, want)
	}
}
