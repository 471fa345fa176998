#!/bin/sh
# The network of packet-dnat.case, or with "down" its removal: this
# namespace and one in the file /run/natb joined by a veth pair (n1, n2:
# 10.201.32.1 and .2, IPv6 off on them), and in /run/natb an nftables
# table that DNATs TCP to 10.201.32.100:80 (no host's: this side routes
# it to n2) to 10.201.32.2:5003. The conntrack and NAT modules are loaded
# here, not by /init (setup.sh bundles them): their hooks are then on no
# other case's path.
set -e
if [ "$1" = down ]; then
	ip link del n1
	umount /run/natb
	rm -f /run/natb
	exit 0
fi
for m in /lib/modules/*/extra/*.ko; do
	case $m in
	*-nf_defrag_ipv4.ko | *-nf_defrag_ipv6.ko | *-nf_conntrack.ko | *-nf_nat.ko | *-nft_chain_nat.ko | *-nft_nat.ko)
		grep -q "^$(basename "$m" .ko | sed 's/^[0-9]*-//') " /proc/modules || insmod "$m" ;;
	esac
done
touch /run/natb
unshare --net=/run/natb true
vmtool link add n1 type veth peer n2 netns /run/natb
for side in 1 2; do
	in=""
	[ $side = 1 ] || in="nsenter -n/run/natb"
	$in sysctl -qw net.ipv6.conf.n$side.disable_ipv6=1
	$in ip link set lo up
	$in ip addr add 10.201.32.$side/24 dev n$side
	$in ip link set n$side up
done
ip route add 10.201.32.100/32 via 10.201.32.2
nsenter -n/run/natb nft -f - <<'NFT'
table ip skbt_dnat {
	chain pre {
		type nat hook prerouting priority -100;
		ip daddr 10.201.32.100 tcp dport 80 dnat to 10.201.32.2:5003;
	}
}
NFT
