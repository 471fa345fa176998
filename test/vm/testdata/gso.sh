#!/bin/sh
# The network of packet-gso.case, or with "down" its removal: this
# namespace and one in the file /run/gsob joined by a veth pair (s1, s2:
# 10.201.31.1 and .2), s1 with TSO off and GSO on, so that a TCP send
# leaves as one GSO skb that the kernel cuts into segments in software
# (skb_segment) before veth takes them. IPv6 is off on the pair. With "gro", s2 has
# GRO on (veth then receives through NAPI, 5.13 on), which merges the
# segments again. With "drop", /run/gsob's input drops TCP segments to
# port 5005 longer than 1000 bytes (an nftables rule).
set -e
if [ "$1" = down ]; then
	ip link del s1
	umount /run/gsob
	rm -f /run/gsob
	exit 0
fi
touch /run/gsob
unshare --net=/run/gsob true
vmtool link add s1 type veth peer s2 netns /run/gsob
for side in 1 2; do
	in=""
	[ $side = 1 ] || in="nsenter -n/run/gsob"
	# IPv6 off on the pair alone: the guest's lo keeps ::1 for the
	# cases after this one.
	$in sysctl -qw net.ipv6.conf.s$side.disable_ipv6=1
	$in ip link set lo up
	$in ip addr add 10.201.31.$side/24 dev s$side
	$in ip link set s$side up
done
vmtool ethtool s1 tso off
vmtool ethtool s1 gso on
if [ "$1" = gro ]; then
	nsenter -n/run/gsob vmtool ethtool s2 gro on
fi
if [ "$1" = drop ]; then
	nsenter -n/run/gsob nft -f - <<'NFT'
table inet skbt_gsodrop {
	chain in {
		type filter hook input priority 0;
		tcp dport 5005 meta length > 1000 drop;
	}
}
NFT
fi
