#!/usr/bin/env bash
# Runs every benchmark and writes bench/RESULTS.md: compile times and
# instruction counts (go test -bench), then startup, throughput, overhead
# and memory against bpftrace (bench/skbbench). Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/skbtrace" ./cmd/skbtrace
go build -o "$out/udpflood" ./bench/udpflood
go build -o "$out/skbbench" ./bench/skbbench
# bpftrace (the Debian package) finds tracepoints through tracefs.
if ! command -v bpftrace >/dev/null; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bpftrace >/dev/null || true
fi
if [ ! -d /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing || true
fi
go test -run '^$' -bench . -benchtime 2s ./codegen ./runtime | tee "$out/gobench.txt"
cd "$out"
./skbbench -skbtrace ./skbtrace -udpflood ./udpflood -compile gobench.txt -o RESULTS.md
cd - >/dev/null
{
	cat "$out/RESULTS.md"
	echo "## Discovery and attach (go test -bench ./runtime)"
	echo
	echo '```'
	grep -E '^Benchmark(Discovery|Attach)' "$out/gobench.txt"
	echo '```'
} > bench/RESULTS.md
cat bench/RESULTS.md
