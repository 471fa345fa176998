#!/usr/bin/env bash
# Prints bench/RESULTS.md's section "dropcount: the rule label, per drop":
# a sender in a network namespace of its own floods UDP to 127.0.0.1 there,
# each datagram dropped by an nftables rule (NETFILTER_DROP) or at a closed
# port (NO_SOCKET); dropcount counts them (no event is printed; the map at
# exit), and the sender's rate tells what each drop costs (the sender and
# dropcount share the host's CPUs). Compared: dropcount as built at BASE
# (before the rule label, default 1ea10f6; SKBTRACE_BASE gives a binary),
# dropcount now (the rule() record in the key), and now with --nftrace
# --netns (the kernel's trace messages). Run as root from the repository's
# top, under the kernel lock: flock /tmp/skbtrace-e2e.lock bash
# bench/dropcount.sh [N] (a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
n=${1:-100000}
ns=skbt_dcbench
basecommit=1ea10f6
. bench/dropbench.sh
ip netns exec $ns nft add table inet dcbench
ip netns exec $ns nft add chain inet dcbench in '{ type filter hook input priority 0; policy accept; }'
ip netns exec $ns nft add rule inet dcbench in udp dport 7001 counter drop comment '"bench drops 7001"'
# run PORT FLOWS BIN FLAGS...: the sender's rate, the drops counted and
# the map's lines for the port's reason.
run() {
	local port=$1 flows=$2
	shift 2
	if ! "$@" -c "ip netns exec $ns $tmp/udpflood -n $n -port $port -flows $flows" dropcount >"$tmp/out" 2>"$tmp/err"; then
		cat "$tmp/err" >&2
		echo "0 0 0"
		return
	fi
	local rate counted lines reason=NO_SOCKET
	[ "$port" = 7001 ] && reason=NETFILTER_DROP
	rate=$(cat "$tmp/err" "$tmp/out" | grep -o '[0-9]* pps' | head -1 | grep -o '[0-9]*' || echo 0)
	counted=$(grep "^@drops\[$reason, .*(netns:$ns)" "$tmp/out" | awk -F': ' '{ s += $NF } END { print s + 0 }')
	lines=$(grep -c "^@drops\[$reason, .*(netns:$ns)" "$tmp/out" || true)
	echo "$rate $counted $lines"
	grep "^@drops\[$reason, .*(netns:$ns)" "$tmp/out" | head -1 >"$tmp/line"
}
# untraced PORT FLOWS: the sender's best rate of 3 runs, and the 3.
untraced() {
	local rs=()
	for i in 1 2 3; do
		rs+=("$(ip netns exec $ns "$tmp/udpflood" -n "$n" -port "$1" -flows "$2" | grep -o '[0-9]* pps' | grep -o '[0-9]*')")
	done
	echo "$(printf '%s\n' "${rs[@]}" | sort -n | tail -1) ${rs[*]}"
}
echo "## dropcount: the rule label, per drop (bench/dropcount.sh)"
echo
echo "Measured $(date -u +%F) at commit $commit on Linux $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')."
echo "$n UDP datagrams from a sender in a namespace of its own to 127.0.0.1 there (from 1 source port, or taking turns from 1,000), each dropped;"
echo "dropcount counts them (no event); 3 runs each; the cost per drop is 1/rate - 1/untraced rate (the best run of each)."
echo "Rerun: \`flock /tmp/skbtrace-e2e.lock bash bench/dropcount.sh [N]\` (root; a few minutes)."
echo
echo "| drops | flows | dropcount | datagrams/s (3 runs) | cost per drop | counted | map lines |"
echo "|---|---|---|---|---|---|---|"
for case in 7001:1 7001:1000 9:1; do
	port=${case%%:*} flows=${case#*:}
	reason=NETFILTER_DROP
	[ "$port" = 9 ] && reason=NO_SOCKET
	read -r u us < <(untraced "$port" "$flows")
	echo "| $reason | $flows | untraced | $us | | | |"
	for cfg in "base:$base" "now:$tmp/skbtrace" "nftrace:$tmp/skbtrace --nftrace --netns $ns"; do
		name=${cfg%%:*}
		cmd=${cfg#*:}
		[ "$name" = nftrace ] && [ "$port" = 9 ] && continue
		rates=() lastc=0 lastl=0
		for i in 1 2 3; do
			read -r rate counted lines < <(run "$port" "$flows" $cmd)
			rates+=("$rate")
			lastc=$counted lastl=$lines
		done
		best=$(printf '%s\n' "${rates[@]}" | sort -n | tail -1)
		cost=$(awk -v r="$best" -v u="$u" 'BEGIN { if (r > 0) printf "%.1f us", (1/r - 1/u) * 1e6; else print "-" }')
		label=$name
		case $name in
		base) label="at $basecommit (no rule label)" ;;
		now) label="now, no --nftrace" ;;
		nftrace) label="now, --nftrace" ;;
		esac
		echo "| $reason | $flows | $label | ${rates[*]} | $cost | $lastc | $lastl |"
		echo "$reason, $flows flows, $label: $(cat "$tmp/line" 2>/dev/null)" >>"$tmp/lines"
	done
done
echo
echo "A line of each (the last run's; the first line of several):"
echo
echo '```'
cat "$tmp/lines"
echo '```'
