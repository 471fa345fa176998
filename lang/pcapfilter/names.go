package pcapfilter

// ipProtos are the IP protocol names `proto \NAME` and the abbreviations use.
var ipProtos = map[string]uint64{
	"icmp": 1, "igmp": 2, "tcp": 6, "udp": 17, "gre": 47, "esp": 50, "ah": 51,
	"icmp6": 58, "pim": 103, "vrrp": 112, "sctp": 132,
}

// etherProtos are the names `ether proto \NAME` takes.
var etherProtos = map[string]uint64{
	"ip": etherIP, "ip6": etherIPv6, "arp": etherARP, "rarp": etherRARP,
}

// arithNames are the named constants of arithmetic expressions: header
// field offsets, TCP flags and ICMP types.
var arithNames = map[string]uint64{
	"icmptype": 0, "icmpcode": 1, "icmp6type": 0, "icmp6code": 1, "tcpflags": 13,
	"tcp-fin": 0x01, "tcp-syn": 0x02, "tcp-rst": 0x04, "tcp-push": 0x08,
	"tcp-ack": 0x10, "tcp-urg": 0x20, "tcp-ece": 0x40, "tcp-cwr": 0x80,
	"icmp-echoreply": 0, "icmp-unreach": 3, "icmp-sourcequench": 4, "icmp-redirect": 5,
	"icmp-echo": 8, "icmp-routeradvert": 9, "icmp-routersolicit": 10, "icmp-timxceed": 11,
	"icmp-paramprob": 12, "icmp-tstamp": 13, "icmp-tstampreply": 14, "icmp-ireq": 15,
	"icmp-ireqreply": 16, "icmp-maskreq": 17, "icmp-maskreply": 18,
	"icmp6-destinationunreach": 1, "icmp6-packettoobig": 2, "icmp6-timeexceeded": 3,
	"icmp6-parameterproblem": 4, "icmp6-echo": 128, "icmp6-echoreply": 129,
	"icmp6-multicastlistenerquery": 130, "icmp6-multicastlistenerreportv1": 131,
	"icmp6-multicastlistenerdone": 132, "icmp6-routersolicit": 133,
	"icmp6-routeradvert": 134, "icmp6-neighborsolicit": 135, "icmp6-neighboradvert": 136,
	"icmp6-redirect": 137,
}

// Qualifier keywords.
var (
	protoQuals = map[string]bool{
		"ether": true, "ip": true, "ip6": true, "arp": true, "rarp": true,
		"tcp": true, "udp": true, "sctp": true, "icmp": true, "icmp6": true, "igmp": true,
	}
	dirQuals  = map[string]bool{"src": true, "dst": true}
	kindQuals = map[string]bool{"host": true, "net": true, "port": true, "portrange": true}
	// indexable are the protocols `proto[offset:size]` takes.
	indexable = map[string]bool{
		"ether": true, "ip": true, "ip6": true, "arp": true, "rarp": true, "tcp": true,
		"udp": true, "sctp": true, "icmp": true, "icmp6": true, "igmp": true,
	}
	// keywords are words that are never a value.
	keywords = map[string]bool{
		"and": true, "or": true, "not": true, "proto": true, "less": true, "greater": true,
		"len": true, "vlan": true, "broadcast": true, "multicast": true, "mask": true,
		"gateway": true, "protochain": true, "inbound": true, "outbound": true, "ifname": true, "on": true,
		"vxlan": true, "geneve": true,
	}
)

func isKeyword(w string) bool {
	return protoQuals[w] || dirQuals[w] || kindQuals[w] || keywords[w]
}
