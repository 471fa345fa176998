#!/bin/sh
# The network of the tunnel-*.case, or with "down" its removal: this
# namespace and one in the file /run/tunb joined by a veth pair (u1, u2:
# 10.201.20.1 and .2), a VXLAN device over it on each side (vx42: VNI 42,
# port 4789, 192.168.42.1 and .2) and a Geneve device (gn43: VNI 43, port
# 6081, 192.168.43.1 and .2). IPv6 is off on them, so that the devices send
# nothing of their own. busybox's ip makes no tunnel with its VNI or
# port, nor a veth peer in another namespace: vmtool link does.
set -e
if [ "$1" = down ]; then
	ip link del vx42
	ip link del gn43
	ip link del u1
	umount /run/tunb
	rm -f /run/tunb
	sysctl -qw net.ipv6.conf.default.disable_ipv6=0
	exit 0
fi
touch /run/tunb
unshare --net=/run/tunb true
for side in 1 2; do
	in=""
	[ $side = 1 ] || in="nsenter -n/run/tunb"
	peer=$((3 - side))
	# Here only the devices made from now on (default), so that lo
	# keeps ::1 for the cases after this one; "down" turns it back.
	if [ $side = 1 ]; then
		sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	else
		$in sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	fi
	[ $side = 2 ] || vmtool link add u1 type veth peer u2 netns /run/tunb
	$in ip link set lo up
	$in ip addr add 10.201.20.$side/24 dev u$side
	$in ip link set u$side up
	$in vmtool link add vx42 type vxlan id 42 local 10.201.20.$side remote 10.201.20.$peer dstport 4789
	$in vmtool link add gn43 type geneve id 43 remote 10.201.20.$peer
	$in ip addr add 192.168.42.$side/24 dev vx42
	$in ip addr add 192.168.43.$side/24 dev gn43
	$in ip link set vx42 up
	$in ip link set gn43 up
done
