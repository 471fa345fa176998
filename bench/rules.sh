#!/usr/bin/env bash
# Prints bench/RESULTS.md's section "whydrop: naming the rule, per drop":
# a sender in a network namespace of its own floods UDP to 127.0.0.1 there,
# each datagram dropped by an nftables rule (NETFILTER_DROP) or at a closed
# port (NO_SOCKET); whydrop traces with its output to a file, and the
# sender's rate tells what each drop costs (the sender and whydrop share
# the host's CPUs). Compared: whydrop as built at BASE (before rule names,
# default 1fd256c; SKBTRACE_BASE gives a binary), whydrop now without
# --nftrace (the rule() record and the whole-block record), and with
# --nftrace --netns (the kernel's trace messages, their match, and nft run for the
# rule's text). Run as root from the repository's top, under the kernel
# lock: flock /tmp/skbtrace-e2e.lock bash bench/rules.sh [N] (a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
n=${1:-20000}
ns=skbt_rulesbench
basecommit=1fd256c
. bench/dropbench.sh
ip netns exec $ns nft -f - <<'NFT'
table inet rulesbench {
	chain in {
		type filter hook input priority 0; policy accept;
		udp dport 7001 counter drop comment "bench drops 7001"
	}
}
NFT
# run PORT BIN FLAGS...: the sender's rate and how many blocks named the rule.
run() {
	local port=$1
	shift
	if ! "$@" -c "ip netns exec $ns $tmp/udpflood -n $n -port $port" whydrop >"$tmp/out" 2>"$tmp/err"; then
		cat "$tmp/err" >&2
		echo "0 0 0"
		return
	fi
	local rate named drops
	rate=$(cat "$tmp/err" "$tmp/out" | grep -o '[0-9]* pps' | head -1 | grep -o '[0-9]*' || echo 0)
	named=$(grep -c '^  nft ' "$tmp/out" || true)
	drops=$(grep -c "127.0.0.1:$port dev lo" "$tmp/out" || true)
	echo "$rate $drops $named"
}
untraced() {
	ip netns exec $ns "$tmp/udpflood" -n "$n" -port "$1" | grep -o '[0-9]* pps' | grep -o '[0-9]*'
}
echo "## whydrop: naming the rule, per drop (bench/rules.sh)"
echo
echo "Measured $(date -u +%F) at commit $commit on Linux $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')."
echo "$n UDP datagrams from a sender in a namespace of its own to 127.0.0.1 there, each dropped;"
echo "whydrop's output to a file; 3 runs each; the cost per drop is 1/rate - 1/untraced rate."
echo "Rerun: \`flock /tmp/skbtrace-e2e.lock bash bench/rules.sh [N]\` (root; about a minute)."
echo
echo "| drops | whydrop | datagrams/s (3 runs) | cost per drop | blocks printed | rules named |"
echo "|---|---|---|---|---|---|"
for port in 7001 9; do
	reason=NETFILTER_DROP
	[ "$port" = 9 ] && reason=NO_SOCKET
	u=$(untraced $port)
	echo "| $reason | untraced | $u | | | |"
	for cfg in "base:$base" "now:$tmp/skbtrace" "nftrace:$tmp/skbtrace --nftrace --netns $ns"; do
		name=${cfg%%:*}
		cmd=${cfg#*:}
		[ "$name" = nftrace ] && [ "$port" = 9 ] && continue
		rates=() lastd=0 lastn=0
		for i in 1 2 3; do
			read -r rate drops named < <(run "$port" $cmd)
			rates+=("$rate")
			lastd=$drops lastn=$named
		done
		best=$(printf '%s\n' "${rates[@]}" | sort -n | tail -1)
		cost=$(awk -v r="$best" -v u="$u" 'BEGIN { if (r > 0) printf "%.1f us", (1/r - 1/u) * 1e6; else print "-" }')
		label=$name
		case $name in
		base) label="at $basecommit (no rule())" ;;
		now) label="now, no --nftrace" ;;
		nftrace) label="now, --nftrace" ;;
		esac
		echo "| $reason | $label | ${rates[*]} | $cost | $lastd | $lastn |"
	done
done
