#!/usr/bin/env bash
# bench/ready.sh SKBTRACE [RUNS]: how long skbtrace takes from its start to
# "tracing N probes" with --filter alone (text) and with -w (each capture
# program is larger: packet bytes and fragments), on this machine's backend;
# the median of RUNS (default 5) each. A benchmark, not a test: bench/run.sh
# puts its table into RESULTS.md.
set -euo pipefail
bin=${1:?usage: bench/ready.sh SKBTRACE [RUNS]}
runs=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# ready ARGS...: milliseconds from the start to the "tracing" line.
ready() {
	local start now
	start=$(date +%s%N)
	"$bin" --duration 100ms "$@" 2>&1 >/dev/null | while IFS= read -r l; do
		case $l in *"skbtrace: tracing "*)
			now=$(date +%s%N)
			echo $(((now - start) / 1000000))
			cat >/dev/null
			;;
		esac
	done
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for mode in text w; do
	args=(--filter 'udp dst port 9')
	[ "$mode" = w ] && args+=(-w "$tmp/x.pcapng")
	for _ in $(seq "$runs"); do ready "${args[@]}"; done | median >"$tmp/$mode"
done
probes=$("$bin" --duration 1ms --filter 'udp dst port 9' 2>&1 >/dev/null | sed -n 's/^skbtrace: tracing \([0-9]*\) probes.*/\1/p')
echo "| mode | ready (ms, median of $runs) |"
echo "|---|---|"
echo "| --filter 'udp dst port 9' ($probes probes) | $(cat "$tmp/text") |"
echo "| the same with -w FILE | $(cat "$tmp/w") |"
