#!/bin/sh
# The network of packet-iptunnels.case, or with "down" its removal: this
# namespace and one in the file /run/iptb joined by a veth pair (p1, p2:
# 10.201.21.1 and .2, fd00:201:21::1 and ::2), and over it on each side
# a GRE device (gre1: 192.168.50.1 and .2), an IPIP one (ipip1:
# 192.168.51.x), an ip6tnl one over the IPv6 underlay (ip4ip6: t6,
# 192.168.52.x) and a VXLAN one over the IPv6 underlay (vx44: VNI 44,
# port 4789, 192.168.44.x). The tunnels' modules are in the bundle's
# tunnel/ directory, which /init does not load: loaded here with
# net.core.fb_tunnels_only_for_init_net at 1 (no fallback devices in the
# namespaces made from then on), taken out again and the sysctl put back
# by "down". IPv6 duplicate address detection is off on p1 and p2, so
# their addresses are there at once.
set -e
if [ "$1" = down ]; then
	for d in gre1 ipip1 t6 vx44 p1; do ip link del $d 2>/dev/null || true; done
	umount /run/iptb
	rm -f /run/iptb
	for m in $(ls -r /lib/modules/*/tunnel/*.ko 2>/dev/null); do
		rmmod "$(basename "$m" .ko | sed 's/^[0-9]*-//')" 2>/dev/null || true
	done
	sysctl -qw net.core.fb_tunnels_only_for_init_net=0
	exit 0
fi
sysctl -qw net.core.fb_tunnels_only_for_init_net=1
for m in /lib/modules/*/tunnel/*.ko; do
	[ -e "$m" ] || continue
	n=$(basename "$m" .ko | sed 's/^[0-9]*-//')
	grep -q "^$n " /proc/modules || insmod "$m"
done
for n in ip_gre ipip ip6_tunnel; do
	grep -q "^$n " /proc/modules || [ -d /sys/module/$n ] || { echo "iptunnels.sh: this kernel has no $n, neither built in nor in the bundle" >&2; exit 1; }
done
touch /run/iptb
unshare --net=/run/iptb true
vmtool link add p1 type veth peer p2 netns /run/iptb
for side in 1 2; do
	in=""
	[ $side = 1 ] || in="nsenter -n/run/iptb"
	peer=$((3 - side))
	$in ip link set lo up
	$in sysctl -qw net.ipv6.conf.p$side.accept_dad=0
	$in ip addr add 10.201.21.$side/24 dev p$side
	$in ip addr add fd00:201:21::$side/64 dev p$side
	$in ip link set p$side up
	$in vmtool link add gre1 type gre local 10.201.21.$side remote 10.201.21.$peer
	$in vmtool link add ipip1 type ipip local 10.201.21.$side remote 10.201.21.$peer
	$in vmtool link add t6 type ip6tnl local fd00:201:21::$side remote fd00:201:21::$peer
	$in vmtool link add vx44 type vxlan id 44 local fd00:201:21::$side remote fd00:201:21::$peer dstport 4789
	$in ip addr add 192.168.50.$side/24 dev gre1
	$in ip addr add 192.168.51.$side/24 dev ipip1
	$in ip addr add 192.168.52.$side/24 dev t6
	$in ip addr add 192.168.44.$side/24 dev vx44
	for d in gre1 ipip1 t6 vx44; do $in ip link set $d up; done
done
