#!/bin/sh
# The network of the packet-frag*.case, or with "down" its removal: this
# namespace and one in the file /run/fragb joined by a veth pair (f1, f2:
# 10.201.30.1 and .2, fd30::1 and ::2) of MTU 1280, so that a 4000-byte
# datagram leaves in fragments and is reassembled in /run/fragb.
set -e
if [ "$1" = down ]; then
	ip link del f1
	umount /run/fragb
	rm -f /run/fragb
	exit 0
fi
touch /run/fragb
unshare --net=/run/fragb true
# IPv6 on, without duplicate address detection: the addresses work at once.
for in in "" "nsenter -n/run/fragb"; do
	$in sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 net.ipv6.conf.default.accept_dad=0
done
vmtool link add f1 type veth peer f2 netns /run/fragb
for side in 1 2; do
	in=""
	[ $side = 1 ] || in="nsenter -n/run/fragb"
	$in ip link set lo up
	$in ip link set f$side mtu 1280
	$in ip addr add 10.201.30.$side/24 dev f$side
	$in ip addr add fd30::$side/64 dev f$side
	$in ip link set f$side up
done
