package pcaptest

// Corpus is the filter expressions whose selections skbtrace's must equal
// tcpdump's on Frames.
var Corpus = []string{
	"ip", "ip6", "arp", "tcp", "udp", "icmp", "icmp6", "igmp", "sctp",
	"vlan", "vlan 10", "vlan 20", "vlan and ip", "vlan 10 and udp", "vlan and vlan", "vlan 100 and vlan 200",
	"vlan and host 10.0.0.1", "vlan and ip6",
	"host 10.0.0.1", "src host 10.0.0.1", "dst host 10.0.0.2", "host 10.0.0.1 or 10.1.2.3",
	"host 10.0.0.1 and not 10.0.0.2", "ip host 10.0.0.1", "arp host 10.0.0.2",
	"net 10.0.0.0/8", "net 10.1.0.0/16", "net 10", "net 192.168.1.0 mask 255.255.255.0",
	"src net 10.0.0.0/24", "dst net 224.0.0.0/4", "src and dst net 10.0.0.0/8",
	"host fd00::1", "src host fd00::2", "net fd00::/16", "ip6 net fd00::/64", "dst net ff00::/8",
	"port 80", "port 53", "src port 80", "dst port 80", "tcp port 80", "udp port 53",
	"port 80 or 443", "tcp port 80 or 443", "portrange 1000-7000", "udp portrange 50-60",
	"tcp dst portrange 1-100", "port http", "not port 80", "ip6 and port 80", "ip and port 53",
	"src or dst port 53", "sctp port 80",
	"proto 17", "ip proto 1", "ip6 proto 58", "proto \\tcp", "ether proto \\arp", "ether proto 0x86dd",
	"ip6 proto 17", "proto 47",
	"less 60", "greater 200", "len > 100", "len <= 42", "len - 14 > 100",
	"tcp[tcpflags] & (tcp-syn|tcp-ack) != 0", "tcp[tcpflags] & tcp-syn != 0 and tcp[tcpflags] & tcp-ack = 0",
	"tcp[tcpflags] = tcp-rst", "tcp[13] & 0xc0 != 0", "tcp[tcpflags] & tcp-fin != 0", "tcp[tcpflags] & tcp-urg != 0",
	"icmp[icmptype] = icmp-echo", "icmp[icmptype] != icmp-echo and icmp[icmptype] != icmp-echoreply",
	"icmp6[icmp6type] = icmp6-echo", "icmp6[icmp6type] = icmp6-neighborsolicit",
	"ip[6:2] & 0x3fff != 0", "ip[0] & 0xf > 5", "ip[8] = 64", "ip[2:2] > 100", "udp[4:2] = 13",
	"tcp[2:2] = 80", "ip6[6] = 44", "ether[0] & 1 != 0", "arp[7] = 1", "arp[6:2] = 2",
	"ip[2:2] - ((ip[0] & 0xf) << 2) > 50", "tcp[(tcp[12] >> 4) * 4] = 0x75",
	"ether host 02:00:00:00:00:01", "ether dst ff:ff:ff:ff:ff:ff", "ether src 02:00:00:00:00:02",
	"broadcast", "multicast", "ether multicast", "ip multicast", "ip6 multicast",
	"(tcp or udp) and not port 22", "tcp and (port 80 or port 443)", "!tcp && !udp",
	"host 10.0.0.1 && (udp || icmp)", "not (ip or ip6)", "tcp or udp and port 53",
	"host 10.0.0.1 and port 80 or arp", "host 10.0.0.1 and (10.0.0.2 or 10.1.2.3)",
	"not host 10.0.0.1 or 10.0.0.2", "ip and not tcp and not udp",
}
