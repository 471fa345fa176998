package session

// mainPath names the functions a packet passes on its main path, which a
// progressive start attaches first: where the kernel's skb tracepoints sit
// (netif_receive_skb, net_dev_queue, net_dev_xmit, kfree_skb, consume_skb),
// and the core of receive (the device layer, IPv4, IPv6, ARP, TCP, UDP,
// ICMP), transmit (the IP output path, the queueing layer, loopback and
// veth) and free. A name this kernel lacks is passed over; the list decides
// only the order, never what is traced.
var mainPath = map[string]bool{}

func init() {
	for _, fn := range []string{
		// Receive: the device layer.
		"netif_receive_skb", "netif_receive_skb_internal", "__netif_receive_skb",
		"__netif_receive_skb_one_core", "__netif_receive_skb_list_core", "netif_rx",
		"netif_rx_internal", "__netif_rx", "enqueue_to_backlog", "napi_gro_receive",
		"dev_gro_receive", "gro_receive_skb", "netif_receive_skb_list_internal",
		"do_xdp_generic", "tcf_classify", "sch_handle_ingress",
		// IPv4, IPv6, ARP.
		"ip_rcv", "ip_rcv_core", "ip_rcv_finish", "ip_rcv_finish_core", "ip_local_deliver",
		"ip_local_deliver_finish", "ip_protocol_deliver_rcu", "ip_forward", "ip_forward_finish",
		"ip_route_input_noref", "ipv6_rcv", "ip6_rcv_core", "ip6_rcv_finish", "ip6_input",
		"ip6_input_finish", "ip6_protocol_deliver_rcu", "ip6_forward", "arp_rcv", "arp_process",
		"nf_hook_slow",
		// Transport.
		"tcp_v4_rcv", "tcp_v6_rcv", "tcp_v4_do_rcv", "tcp_rcv_established", "tcp_rcv_state_process",
		"udp_rcv", "__udp4_lib_rcv", "udp_unicast_rcv_skb", "udp_queue_rcv_skb", "udp_queue_rcv_one_skb",
		"__udp_enqueue_schedule_skb", "udpv6_rcv", "__udp6_lib_rcv", "udpv6_queue_rcv_skb",
		"icmp_rcv", "icmpv6_rcv", "raw_rcv", "sock_queue_rcv_skb_reason", "__sock_queue_rcv_skb",
		// Transmit.
		"__ip_queue_xmit", "ip_queue_xmit", "__ip_local_out", "ip_local_out", "ip_output",
		"ip_finish_output", "__ip_finish_output", "ip_finish_output2", "ip_send_skb", "ip_push_pending_frames",
		"ip6_xmit", "ip6_output", "ip6_finish_output", "__ip6_finish_output", "ip6_finish_output2",
		"ip6_local_out", "__ip6_local_out", "ip6_send_skb", "udp_send_skb", "udp_v6_send_skb",
		"__tcp_transmit_skb", "tcp_transmit_skb", "neigh_resolve_output", "neigh_hh_output",
		"__dev_queue_xmit", "dev_queue_xmit", "dev_hard_start_xmit", "xmit_one", "validate_xmit_skb",
		"dev_queue_xmit_nit", "sch_direct_xmit", "__dev_xmit_skb", "loopback_xmit", "veth_xmit",
		"veth_forward_skb", "__dev_forward_skb", "dev_forward_skb",
		// Free.
		"kfree_skb", "kfree_skb_reason", "sk_skb_reason_drop", "__kfree_skb", "consume_skb",
		"__consume_stateless_skb", "kfree_skbmem", "skb_release_data", "skb_release_head_state",
		"napi_consume_skb", "__dev_kfree_skb_any", "__dev_kfree_skb_irq", "kfree_skb_list_reason",
		"skb_attempt_defer_free", "napi_skb_free_stolen_head",
	} {
		mainPath[fn] = true
	}
}

// splitMain puts the steps of the main path's functions first, in their
// order, and the rest after, in theirs.
func splitMain(steps []step) (first, rest []step) {
	for _, sp := range steps {
		if mainPath[sp.fn] {
			first = append(first, sp)
		} else {
			rest = append(rest, sp)
		}
	}
	return first, rest
}
