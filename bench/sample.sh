#!/usr/bin/env bash
# Prints bench/RESULTS.md's section "--sample and --max-rate: the cost per
# packet at each setting": a sender in a network namespace of its own
# floods UDP to a closed port on 127.0.0.1 there, each datagram traced at
# every skb: hop of its path in that namespace by a script that counts
# (@[func] = count()) or prints a line per hop (printf), with no flag,
# --sample 1 (the gate alone), --sample 10, --sample 100 and --max-rate
# 1000; the sender's rate tells what each packet costs (the sender and
# skbtrace share the host's CPUs). Run as root from the repository's top,
# under the kernel lock: flock /tmp/skbtrace-e2e.lock bash bench/sample.sh
# [N] (a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
n=${1:-100000}
ns=skbt_smbench
tmp=$(mktemp -d)
cleanup() { ip netns del $ns 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
go build -o "$tmp/skbtrace" ./cmd/skbtrace
go build -o "$tmp/udpflood" ./bench/udpflood
commit=$(git rev-parse --short HEAD)
ip netns del $ns 2>/dev/null || true
ip netns add $ns
ip -n $ns link set lo up
inum=$(ip netns exec $ns stat -L -c %i /proc/self/ns/net)
port=9
flood() { ip netns exec $ns "$tmp/udpflood" -n "$n" -port $port; }
# run SCRIPT FLAGS...: the sender's rate, the lines printed (or hops
# counted), and the summary's packets kept and events left out.
run() {
	local script=$1
	shift
	if ! "$tmp/skbtrace" -v "$@" -e "$script" -c "ip netns exec $ns $tmp/udpflood -n $n -port $port" >"$tmp/out" 2>"$tmp/err"; then
		cat "$tmp/err" >&2
		echo "0 0 - - - -"
		return
	fi
	local rate events kept out
	# -c's command writes to skbtrace's stderr.
	rate=$(grep -o '[0-9]* pps' "$tmp/err" | head -1 | grep -o '[0-9]*' || echo 0)
	events=$(grep -c '^[0-9]' "$tmp/out" || true)
	if grep -q '^@\[' "$tmp/out"; then
		events=$(grep '^@\[' "$tmp/out" | awk -F': ' '{ s += $NF } END { print s + 0 }')
	fi
	kept=$(grep -o -- '--sample: [0-9]* packets\? kept' "$tmp/err" | grep -o '[0-9]*' || echo -)
	out=$(grep -o '^skbtrace: [0-9]* \(sampled out\|capped\)' "$tmp/err" | grep -o '[0-9]*' | paste -sd+ || true)
	# -v's last line: skbtrace's CPU time and its programs' run time, per
	# datagram sent.
	local cpu prog
	read -r cpu prog < <(grep '^skbtrace: overhead: skbtrace [^(]* CPU, its programs' "$tmp/err" | tail -1 |
		sed 's/^skbtrace: overhead: skbtrace \([^ ]*\) CPU, its programs \([^ ]*\) in.*/\1 \2/' |
		awk -v n="$n" 'function ns(d) { if (d ~ /ms$/) return d * 1e6; if (d ~ /µs$/) return d * 1e3; if (d ~ /ns$/) return d + 0; if (d ~ /s$/) return d * 1e9; return d }
			{ printf "%.0f %.0f\n", ns($1) / n, ns($2) / n }')
	echo "$rate $events ${kept:--} ${out:--} ${cpu:--} ${prog:--}"
}
best() { printf '%s\n' "$@" | sort -n | tail -1; }
untraced=()
for i in 1 2 3; do
	untraced+=("$(flood | grep -o '[0-9]* pps' | grep -o '[0-9]*')")
done
u=$(best "${untraced[@]}")
echo "## --sample and --max-rate: the cost per packet at each setting (bench/sample.sh)"
echo
echo "Measured $(date -u +%F) at commit $commit on Linux $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); skb:*: $("$tmp/skbtrace" -v -e 'skb:* { @ = count() }' -c true 2>&1 | grep -o 'attaches to the [0-9]* tracepoints\|[0-9]* functions attached with [a-z-]*' | head -1)."
echo "$n UDP datagrams from a sender in a namespace of its own to a closed port on 127.0.0.1 there, each traced at every skb: hop"
echo "(\`skb:* /netns == INUM/\`); 3 runs each; the cost per datagram is 1/rate - 1/untraced rate (the best run of each)."
echo "Untraced: ${untraced[*]} datagrams/s."
echo "Rerun: \`flock /tmp/skbtrace-e2e.lock bash bench/sample.sh [N]\` (root; a few minutes)."
echo
echo "Each datagram to a closed port on loopback makes two skbs, the datagram and its ICMP error (loopback is not rate-limited): \"packets kept\" counts skbs."
echo "The last two columns are the third run's, over the datagrams sent: skbtrace's own CPU time (getrusage: reading, formatting, printing)"
echo "and its programs' run time (bpf_prog_info run_time_ns, BPF stats on for the run): figures a loaded host does not blur as it does the rate."
echo
echo "| action | flags | datagrams/s (3 runs) | cost per datagram | hops counted or printed | packets kept | events left out | skbtrace CPU per datagram | programs per datagram |"
echo "|---|---|---|---|---|---|---|---|---|"
for action in count print; do
	script="skb:* /netns == $inum/ { @[func] = count() }"
	[ $action = print ] && script="skb:* /netns == $inum/ { printf(\"%d\\n\", len) }"
	for flags in "" "--sample 1" "--sample 10" "--sample 100" "--max-rate 1000"; do
		rates=() last=""
		for i in 1 2 3; do
			# shellcheck disable=SC2086
			last=$(run "$script" $flags)
			rates+=("${last%% *}")
		done
		read -r _ events kept out cpu prog <<<"$last"
		b=$(best "${rates[@]}")
		cost=$(awk -v r="$b" -v u="$u" 'BEGIN { if (r > 0) printf "%.2f us", (1/r - 1/u) * 1e6; else print "-" }')
		echo "| $action | ${flags:-none} | ${rates[*]} | $cost | $events | $kept | $out | $cpu ns | $prog ns |"
	done
done
