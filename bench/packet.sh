#!/usr/bin/env bash
# Prints bench/RESULTS.md's section "track()'s logical packet: the cost per
# datagram": a sender in a network namespace of its own floods N (20000)
# UDP datagrams to a closed port on 127.0.0.1 there, every skb: hop of
# their path traced by a script that counts (@[func] = count()), without
# track(), with track() as it was before the logical packet (commit
# BEFORE, default 98207ba) and with track() now (HEAD): the programs' run
# time per datagram (BPF stats, from -v's overhead line) and skbtrace's
# CPU, on the backend auto takes here; and --filter 'udp and dst port 9'
# (-o /dev/null), which follows what it matches now (track()), before and
# now. Run as root from the repository's
# top: flock /tmp/skbtrace-e2e.lock bash bench/packet.sh [N [BEFORE]].
#
# bash bench/packet.sh vm [KERNEL [BEFORE]]: the same per function backend
# (kprobe-multi, fentry, kprobe; BACKENDS= chooses) in the VM of test/vm
# (KERNEL default 6.12; a BACKENDS word may be BACKEND:SCRIPT,SCRIPT, of
# plain, track, filter), where the joins' fentry and fexit programs attach,
# and --filter's cost, which follows what it matches now: bench/vm/packet.sh
# in the guest, under the VM lock, a table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
if [ "${1:-}" = vm ]; then
	k=${2:-6.12} before=${3:-98207ba}
	tmp=$(mktemp -d)
	trap 'git worktree remove --force "$tmp/before" 2>/dev/null || true; rm -rf "$tmp"' EXIT
	CGO_ENABLED=0 go build -trimpath -o "$tmp/skbtrace" ./cmd/skbtrace
	git worktree add -q "$tmp/before" "$before"
	(cd "$tmp/before" && CGO_ENABLED=0 go build -trimpath -o "$tmp/skbtrace-before" ./cmd/skbtrace)
	echo "${BACKENDS:-kprobe-multi fentry kprobe}" >"$tmp/backends"
	(while sleep 2; do for p in $(pgrep -f '^qemu-system'); do renice -n -10 -p "$p" >/dev/null 2>&1; done; done) &
	renicer=$!
	flock /tmp/skbtrace-vm.lock test/vm/run.sh -t 3600 -T 7200 -k "$k" -s bench/vm/packet.sh "$tmp/skbtrace" "$tmp/skbtrace-before" "$tmp/backends" | tee "$tmp/run.txt" || true
	kill $renicer
	sed -i 's/\r$//' "$tmp/run.txt"
	echo "## track()'s logical packet per backend, in a VM (bench/packet.sh vm)"
	echo
	echo "Measured $(date -u +%F) at commit $(git rev-parse --short HEAD) (before: $before), kernel $k in QEMU (TCG, 1 vCPU, at nice -10 on a shared 2-CPU host)."
	echo "20000 UDP datagrams to a closed port on 127.0.0.1, every skb function traced; flood: the sender's seconds ($(sed -n 's/^##### [^:]*: 20000 datagrams untraced in \(.*\) s$/\1 s/p' "$tmp/run.txt") untraced);"
	echo "bpf: the programs' run time per datagram (run-time statistics: the datagram and its ICMP error, every hop, the joins). One run each."
	echo "Rerun: \`bash bench/packet.sh vm [KERNEL [BEFORE]]\` (root)."
	echo
	echo "| kernel | backend | script | binary | flood s | bpf ns per datagram | program runs per datagram |"
	echo "|---|---|---|---|---|---|---|"
	sed -n 's/^ROW \(.*\)$/| \1 |/p' "$tmp/run.txt"
	exit 0
fi
n=${1:-20000}
before=${2:-98207ba}
ns=skbt_pkbench
tmp=$(mktemp -d)
cleanup() {
	ip netns del $ns 2>/dev/null || true
	git worktree remove --force "$tmp/before" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/skbtrace" ./cmd/skbtrace
go build -o "$tmp/udpflood" ./bench/udpflood
git worktree add -q "$tmp/before" "$before"
(cd "$tmp/before" && go build -o "$tmp/skbtrace-before" ./cmd/skbtrace)
commit=$(git rev-parse --short HEAD)
ip netns del $ns 2>/dev/null || true
ip netns add $ns
ip -n $ns link set lo up
inum=$(ip netns exec $ns stat -L -c %i /proc/self/ns/net)
# run BIN SCRIPT: the sender's rate, skbtrace's CPU and its programs' run
# time per datagram.
run() {
	local bin=$1
	shift
	"$bin" -v "$@" -c "ip netns exec $ns $tmp/udpflood -n $n -port 9" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; echo "- - -"; return; }
	local rate
	rate=$(grep -o '[0-9]* pps' "$tmp/err" | head -1 | grep -o '[0-9]*' || echo 0)
	grep '^skbtrace: overhead: skbtrace [^(]* CPU, its programs' "$tmp/err" | tail -1 |
		sed 's/^skbtrace: overhead: skbtrace \([^ ]*\) CPU, its programs \([^ ]*\) in.*/\1 \2/' |
		awk -v n="$n" -v r="$rate" 'function ns(d) { if (d ~ /ms$/) return d * 1e6; if (d ~ /µs$/) return d * 1e3; if (d ~ /ns$/) return d + 0; if (d ~ /s$/) return d * 1e9; return d }
			{ printf "%s %.0f %.0f\n", r, ns($1) / n, ns($2) / n }'
}
backend=$("$tmp/skbtrace" -v -e 'skb:* { @ = count() }' -c true 2>&1 | grep -o 'attaches to the [0-9]* tracepoints\|[0-9]* functions attached with [a-z-]*' | head -1)
echo "## track()'s logical packet: the cost per datagram (bench/packet.sh)"
echo
echo "Measured $(date -u +%F) at commit $commit (before: $before) on Linux $(uname -r), $(nproc) CPUs; skb:* $backend."
echo "$n UDP datagrams to a closed port on 127.0.0.1 in a namespace of their own, every skb: hop counted (\`skb:* /netns == INUM/ { ...@[func] = count() }\`);"
echo "3 runs each, the median's figures; programs: BPF run time per datagram (the datagram and its ICMP error, every hop)."
echo "Rerun: \`flock /tmp/skbtrace-e2e.lock bash bench/packet.sh [N [BEFORE]]\` (root)."
echo
echo "| script | binary | datagrams/s | skbtrace CPU per datagram | programs per datagram |"
echo "|---|---|---|---|---|"
for what in plain track filter; do
	args=(-e "skb:* /netns == $inum/ { @[func] = count() }")
	[ $what = track ] && args=(-e "skb:* /netns == $inum/ { track(); @[func] = count() }")
	# --filter follows what it matches now (track()), before it did not.
	[ $what = filter ] && args=(-o /dev/null --filter "udp and dst port 9")
	for bin in before now; do
		b="$tmp/skbtrace"
		[ $bin = before ] && b="$tmp/skbtrace-before"
		rows=()
		for i in 1 2 3; do rows+=("$(run "$b" "${args[@]}")"); done
		read -r rate cpu prog < <(printf '%s\n' "${rows[@]}" | sort -k3 -n | sed -n 2p)
		label=$bin
		[ $bin = before ] && label="$before"
		echo "| $what | $label | $rate | $cpu ns | $prog ns |"
	done
done
