#!/usr/bin/env bash
# Runs every benchmark and writes bench/RESULTS.md: compile and parse
# times, the printer's cost per event (go test -bench), then startup,
# throughput, program sizes, overhead and memory against bpftrace
# (bench/skbbench). Run as root, under the kernel lock, from a clean tree:
# the file names the commit it measured.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
if [ -n "$(git status --porcelain --untracked-files=no)" ] && [ -z "${BENCH_DIRTY:-}" ]; then
	echo "bench: the tree has uncommitted changes; commit them (or set BENCH_DIRTY=1 to measure anyway)" >&2
	exit 1
fi
commit=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	commit="$commit+changes"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/skbtrace" ./cmd/skbtrace
go build -o "$out/udpflood" ./bench/udpflood
go build -o "$out/skbbench" ./bench/skbbench
go build -o "$out/bigscript" ./bench/bigscript
# bpftrace (the Debian package) finds tracepoints through tracefs.
if ! command -v bpftrace >/dev/null; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bpftrace >/dev/null || true
fi
if [ ! -d /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing || true
fi
go test -run '^$' -bench . -benchtime 2s -benchmem ./lang ./codegen ./runtime/output ./runtime/session ./runtime/kernel | tee "$out/gobench.txt"
cd "$out"
./skbbench -skbtrace ./skbtrace -udpflood ./udpflood -compile gobench.txt -commit "$commit" -o RESULTS.md
cd - >/dev/null
{
	cat "$out/RESULTS.md"
	echo "## A 1 MB script: parse, check and compile (bench/bigscript)"
	echo
	echo '```'
	"$out/bigscript"
	echo '```'
	echo
	echo "## A 214,000-probe script (11 MB), run whole (bench/bigrun.sh)"
	echo
	echo '```'
	bash bench/bigrun.sh "$out/skbtrace"
	echo '```'
	echo
	echo "## Ready to trace: text and -w (bench/ready.sh)"
	echo
	echo "Start to the \"tracing\" line, on this machine's backend for skb: probes."
	echo
	bash bench/ready.sh "$out/skbtrace" 5
	echo
	echo "## Parsing: time per probe as scripts grow (go test -bench ./lang)"
	echo
	echo '```'
	grep -E '^BenchmarkParse' "$out/gobench.txt"
	echo '```'
	echo
	echo "## Printing recorded records: ns and allocations per event (go test -bench ./runtime)"
	echo
	echo '```'
	grep -E '^BenchmarkPrinter(Capture)?[-/]' "$out/gobench.txt"
	echo '```'
	echo
	echo "## Discovery and attach (go test -bench ./runtime/kernel ./runtime)"
	echo
	echo '```'
	grep -E '^Benchmark(Discovery|Attach)' "$out/gobench.txt"
	echo '```'
	echo
	# Names: the printers with names, -d with and without them, the pod
	# filter's test in BPF, the resolver's refresh.
	BENCH_COMMIT=$commit bash bench/names.sh "$out/skbtrace" "$out/skbbench" "$out/udpflood"
	if [ -f bench/NOTES.md ]; then
		echo
		cat bench/NOTES.md
	fi
	# bench/vm.sh's figures: attach and detach per backend in a VM.
	if [ -f bench/vm.md ]; then
		echo
		cat bench/vm.md
	fi
} > bench/RESULTS.md
cat bench/RESULTS.md
