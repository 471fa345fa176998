package stdlib

// tracepointArgs names the arguments of the packet tracepoints as their
// TP_PROTO declares them (include/trace/events/skb.h, net.h, tcp.h, sock.h,
// udp.h, qdisc.h, xdp.h). A kernel's BTF names them through its
// __bpf_trace_CLASS functions, but those are notrace, and the pahole of
// kernels such as 5.10 left them out: there the raw arguments have no names
// and `ksym(location)` on tracepoint:skb:kfree_skb would not resolve.
var tracepointArgs = map[string][]string{
	"kfree_skb":                    {"skb", "location"},
	"consume_skb":                  {"skb"},
	"skb_copy_datagram_iovec":      {"skb", "len"},
	"net_dev_start_xmit":           {"skb", "dev"},
	"net_dev_xmit":                 {"skb", "rc", "dev", "skb_len"},
	"net_dev_xmit_timeout":         {"dev", "queue_index"},
	"net_dev_queue":                {"skb"},
	"netif_receive_skb":            {"skb"},
	"netif_rx":                     {"skb"},
	"napi_gro_frags_entry":         {"skb"},
	"napi_gro_receive_entry":       {"skb"},
	"netif_receive_skb_entry":      {"skb"},
	"netif_receive_skb_list_entry": {"skb"},
	"netif_rx_entry":               {"skb"},
	"netif_rx_ni_entry":            {"skb"},
	"napi_gro_frags_exit":          {"ret"},
	"napi_gro_receive_exit":        {"ret"},
	"netif_receive_skb_exit":       {"ret"},
	"netif_receive_skb_list_exit":  {"ret"},
	"netif_rx_exit":                {"ret"},
	"netif_rx_ni_exit":             {"ret"},
	"tcp_retransmit_skb":           {"sk", "skb"},
	"tcp_send_reset":               {"sk", "skb"},
	"tcp_receive_reset":            {"sk"},
	"tcp_destroy_sock":             {"sk"},
	"tcp_rcv_space_adjust":         {"sk"},
	"tcp_retransmit_synack":        {"sk", "req"},
	"tcp_probe":                    {"sk", "skb"},
	"inet_sock_set_state":          {"sk", "oldstate", "newstate"},
	"sock_rcvqueue_full":           {"sk", "skb"},
	"sock_exceed_buf_limit":        {"sk", "prot", "allocated", "kind"},
	"udp_fail_queue_rcv_skb":       {"rc", "sk"},
	"qdisc_dequeue":                {"qdisc", "txq", "packets", "skb"},
	"xdp_exception":                {"dev", "xdp", "act"},
}

// TracepointArgs returns the names of a packet tracepoint's n arguments,
// or nil where the tracepoint is not known or the kernel's has another
// number of them (a later kernel added one: that kernel's BTF names them).
func TracepointArgs(name string, n int) []string {
	if names := tracepointArgs[name]; len(names) == n {
		return names
	}
	return nil
}
