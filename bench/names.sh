#!/usr/bin/env bash
# Prints bench/RESULTS.md's section "Names: pods and containers": what the
# names cost per printed event in user space (go test -bench), that they
# change no BPF program (-d listings compared), what the pod filter's test
# adds to each program (instructions, and the kernel's run time per packet),
# and the resolver's refresh. Run as root from the repository's top, under
# the kernel lock: flock /tmp/skbtrace-e2e.lock bash bench/names.sh
# [SKBTRACE SKBBENCH UDPFLOOD] (built here where not given).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
skbtrace=${1:-}
skbbench=${2:-}
udpflood=${3:-}
if [ -z "$skbtrace" ]; then go build -o "$tmp/skbtrace" ./cmd/skbtrace; skbtrace=$tmp/skbtrace; fi
if [ -z "$skbbench" ]; then go build -o "$tmp/skbbench" ./bench/skbbench; skbbench=$tmp/skbbench; fi
if [ -z "$udpflood" ]; then go build -o "$tmp/udpflood" ./bench/udpflood; udpflood=$tmp/udpflood; fi
# BENCH_COMMIT names the commit the given binaries were built from.
commit=${BENCH_COMMIT:-$(git rev-parse --short HEAD)}
if [ -z "${BENCH_COMMIT:-}" ] && [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	commit="$commit+changes"
fi

echo "## Names: pods and containers (bench/names.sh)"
echo
echo "Measured $(date -u +%F) at commit $commit on Linux $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'),"
echo "tracepoint backend. Rerun this section alone: \`flock /tmp/skbtrace-e2e.lock bash bench/names.sh\` (root; about a minute)."
echo
echo "### Per printed event, in user space (go test -bench PrinterNames ./runtime/output)"
echo
echo "A print record of len, dev, netns, saddr, sport, dport (print) and of len, dev, netns,"
echo "pod, podns, container (pod), formatted as text and JSON: with no names (IDs alone), with a"
echo "fake output.Names that knows the namespace, the veth and the address (a map read each), and"
echo "with a real names.Resolver refreshed from this host and an ip netns of the records' (its"
echo "names are made once per identity and kept until its tables change: output.ResolverNames)."
echo
echo '```'
go test -run '^$' -bench 'PrinterNames' -benchtime 1s -count 3 -benchmem ./runtime/output | grep -E '^Benchmark'
echo '```'
echo
echo "### In BPF: the programs with and without names, and the pod filter's test"
echo
echo "\`skbtrace -d\` (the script's tree and every program's instructions) with \`--names\` and"
echo "\`--names=false\`, compared byte for byte; then the instructions of each program (before the"
echo "kernel's rewrites) without and with \`--netns\` (this namespace's inode)."
echo
host=$(stat -L -c %i /proc/self/ns/net)
echo "| script | programs | -d with and without names | instructions | with \`--netns\` | added per program |"
echo "|---|---|---|---|---|---|"
while IFS='|' read -r label args; do
	eval "set -- $args"
	"$skbtrace" -d --names "$@" >"$tmp/n" 2>&1
	"$skbtrace" -d --names=false "$@" >"$tmp/p" 2>&1
	"$skbtrace" -d --netns "$host" "$@" >"$tmp/s" 2>&1
	same=differ
	cmp -s "$tmp/n" "$tmp/p" && same=identical
	progs=$(grep -c '^program ' "$tmp/p" || true)
	ins() { grep -oE '^program .*, ([0-9]+) instructions' "$1" | grep -oE '[0-9]+ instructions' | awk '{print $1}'; }
	added=$(paste <(ins "$tmp/p") <(ins "$tmp/s") | awk '{d=$2-$1; if(NR==1||d<mn)mn=d; if(NR==1||d>mx)mx=d} END{if(mn==mx)print mn; else print mn "-" mx}')
	total=$(ins "$tmp/p" | awk '{s+=$1} END{print s}')
	totals=$(ins "$tmp/s" | awk '{s+=$1} END{print s}')
	echo "| $label | $progs | $same | $total | $totals | $added |"
done <<'ROWS'
`print(dev, netns, pod, podns, container, saddr)` on kfree_skb|-e 'tracepoint:skb:kfree_skb { print(dev, netns, pod, podns, container, saddr) }'
`printf` of dev, netns, saddr on skb:*|-e 'skb:* { printf("%s %u %s\n", dev, netns, saddr) }'
`@[netns, pod] = count()` on kfree_skb|-e 'tracepoint:skb:kfree_skb { @[netns, pod] = count() }'
dropwatch|dropwatch
whydrop|whydrop
tcpconnect|tcpconnect
tcpretrans|tcpretrans
ROWS
echo
echo "The kernel's own figures, with BPF run-time statistics on (\`skbbench -only names\`): the"
echo "largest program's size after the kernel's rewrites, and its run time per run while a"
echo "loopback sender sends 100,000 datagrams to a closed port (one kfree_skb each); then the"
echo "sender's rate (median of 3), whose noise on this shared machine is larger than the test."
echo
"$skbbench" -only names -skbtrace "$skbtrace" -udpflood "$udpflood" -packets 100000 | sed -n '/^| /,$p'
echo
echo "### The resolver's refresh (go test -bench 'Refresh|NetnsLookup' ./runtime/names)"
echo
echo "One Refresh asks every source (CRI, /proc, cgroup2, podman, Docker, /run/netns, veths) on"
echo "this host as it is, with 3 ip netns added; host+500procs with 500 more processes. cpu-ns/op"
echo "is the process' user and system time per refresh (getrusage); %cpu@1s is that at the"
echo "default 1 s poll, in percent of one CPU."
echo
echo '```'
go test -run '^$' -bench 'Refresh|NetnsLookup' -benchtime 2s -benchmem ./runtime/names | grep -E '^Benchmark'
echo '```'
