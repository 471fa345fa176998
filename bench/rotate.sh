#!/usr/bin/env bash
# Prints bench/RESULTS.md's section "Rotation": a sender in a network
# namespace of its own floods N UDP datagrams to a closed port on its lo;
# skbtrace writes each once, where it leaves (tracepoint net_dev_queue), as
# a pcapng frame (-w), a JSON event (-o -f json), or both, without rotation
# and with -C, -C -W 3 and -G 1. For each: the sender's rate, what skbtrace
# wrote (frames read back by tcpdump from each file alone, events counted
# in each JSON file), what it reported lost, the files kept and rotated
# out, and whether written + rotated out + lost = sent. Frames of a run
# are alike (one hop, one length), so every full pcapng file holds as
# many: the files a ring rotated out held that many each (JSON lines
# differ by a few bytes: an estimate, marked ≈). Run as root from the
# repository's top, under the kernel lock:
# flock /tmp/skbtrace-e2e.lock bash bench/rotate.sh [N] (a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
n=${1:-200000}
ns=skbt_rotbench
tmp=$(mktemp -d)
cleanup() { ip netns del $ns 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
go build -o "$tmp/skbtrace" ./cmd/skbtrace
go build -o "$tmp/udpflood" ./bench/udpflood
commit=$(git rev-parse --short HEAD)
ip netns del $ns 2>/dev/null || true
ip netns add $ns
ip -n $ns link set lo up
port=4999
script_w="tracepoint:net:net_dev_queue /pcap(\"udp dst port $port\")/ { capture() }"
script_o="tracepoint:net:net_dev_queue /pcap(\"udp dst port $port\")/ { print(len) }"
script_wo="tracepoint:net:net_dev_queue /pcap(\"udp dst port $port\")/ { capture(); print(len) }"
flood="ip netns exec $ns $tmp/udpflood -n $n -port $port -size 100"

# frames FILE...: the frames in each file, read alone (space-separated).
frames() {
	local f out=()
	for f in "$@"; do
		out+=("$(tcpdump -r "$f" -nn 2>/dev/null | wc -l)")
	done
	echo "${out[*]}"
}
# events FILE...: the JSON events in each file; every line must parse.
events() {
	local f out=()
	for f in "$@"; do
		python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$f" || { echo "bad JSON in $f" >&2; exit 1; }
		out+=("$(grep -c '"type":"event"' "$f" || true)")
	done
	echo "${out[*]}"
}
# account FLAG COUNTS: written, rotated out and the files line, from
# skbtrace's stderr ($tmp/err) and the counts per kept file.
account() {
	local flag=$1 counts=$2 line removed=0 written full
	line=$(grep "^skbtrace: $flag wrote" "$tmp/err" || true)
	if [[ $line =~ \(([0-9]+)\ older ]]; then removed=${BASH_REMATCH[1]}; fi
	written=$(echo "$counts" | tr ' ' '\n' | awk '{ s += $1 } END { print s + 0 }')
	full=$(echo "$counts" | cut -d' ' -f1)
	echo "$written $removed $((removed * full))"
}

echo "## Rotation: -w and -o under a flood (bench/rotate.sh)"
echo
echo "Measured $(date -u +%F) at commit $commit on Linux $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')."
echo "$n UDP datagrams of 100 bytes from a sender in a namespace of its own to a closed port on its lo; skbtrace writes each once at net_dev_queue."
echo "Written: frames tcpdump reads back from each file alone, JSON events in each file (every line parsed); rotated out: the files -W removed,"
echo "each holding as many as a full file kept (the frames are alike; JSON lines differ by a few bytes, so there it is an estimate, ≈); lost: what skbtrace reported."
echo "Sent = written + rotated out + lost."
echo "Rerun: \`flock /tmp/skbtrace-e2e.lock bash bench/rotate.sh [N]\` (root; a few minutes)."
echo
echo "| output | rotation | sender's datagrams/s | files kept (rotated out) | written | in rotated-out files | lost | sent = sum |"
echo "|---|---|---|---|---|---|---|---|"
untraced=$($flood | grep -o '[0-9]* pps' | grep -o '[0-9]*')
echo "| untraced | | $untraced | | | | | |"
for out in w o wo; do
	for rot in "" "-C 1m" "-C 1m -W 3" "-G 1"; do
		dir=$tmp/run
		rm -rf "$dir"
		mkdir -p "$dir"
		args=(-f json)
		script=$script_w
		case $out in
		w) args+=(-w "$dir/cap.pcapng" -o "$dir/stdout") ;;
		o) args+=(-o "$dir/ev.json") script=$script_o ;;
		wo) args+=(-w "$dir/cap.pcapng" -o "$dir/ev.json") script=$script_wo ;;
		esac
		# shellcheck disable=SC2086
		if ! "$tmp/skbtrace" "${args[@]}" $rot -e "$script" -c "$flood" >/dev/null 2>"$tmp/err"; then
			cat "$tmp/err" >&2
			exit 1
		fi
		rate=$(grep -o '[0-9]* pps' "$tmp/err" | grep -o '[0-9]*' || echo "-")
		lost=$(grep -o '[0-9]* events lost' "$tmp/err" | grep -o '^[0-9]*' || echo 0)
		for flag in -w -o; do
			[ "$flag" = -w ] && [ "$out" = o ] && continue
			[ "$flag" = -o ] && [ "$out" = w ] && continue
			if [ -n "$rot" ]; then
				read -ra files <<<"$(grep "^skbtrace: $flag wrote" "$tmp/err" | sed 's/.*: //')"
			elif [ "$flag" = -w ]; then
				files=("$dir/cap.pcapng")
			else
				files=("$dir/ev.json")
			fi
			if [ "$flag" = -w ]; then counts=$(frames "${files[@]}"); else counts=$(events "${files[@]}"); fi
			read -r written removed gone < <(account "$flag" "$counts")
			total=$((written + gone + lost))
			ok="$total"
			[ "$total" = "$n" ] && ok="$total (=)"
			# JSON lines differ by a few bytes (times, CPUs): the files
			# rotated out are estimated from a full one.
			[ "$flag" = -o ] && [ "$removed" != 0 ] && ok="≈ $total"
			kind=$([ "$flag" = -w ] && echo "-w pcapng" || echo "-o json")
			[ "$out" = wo ] && kind="$kind (with $([ "$flag" = -w ] && echo -o || echo -w))"
			echo "| $kind | ${rot:-none} | $rate | ${#files[@]} ($removed) | $written | $gone | $lost | $ok |"
		done
	done
done
