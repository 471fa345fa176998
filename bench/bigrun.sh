#!/usr/bin/env bash
# bench/bigrun.sh [SKBTRACE] [PROBES]: runs a generated script of PROBES
# (default 214,000, about 11 MB) BEGIN probes, each `@mN = count(); printf`,
# with skbtrace (default: built from the tree) and -c true, under
# /usr/bin/time -v, and prints one line: the exit status, the wall-clock
# time, the CPU time, the peak memory, how many lines it printed and the
# last line of its stderr (what failed, or the "tracing" line). A
# benchmark, not a test: run.sh puts its line into RESULTS.md. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
	go build -o "$out/skbtrace" ./cmd/skbtrace
	bin=$out/skbtrace
fi
probes=${2:-214000}
go build -o "$out/bigscript" ./bench/bigscript
"$out/bigscript" -probes "$probes" -o "$out/big.st"
size=$(stat -c %s "$out/big.st")
status=0
/usr/bin/time -v -o "$out/time.txt" "$bin" -v -c true "$out/big.st" >"$out/stdout.txt" 2>"$out/stderr.txt" || status=$?
field() { awk -F': ' -v k="$1" '$1 ~ k {print $2}' "$out/time.txt"; }
wall=$(field 'Elapsed \\(wall clock\\)')
user=$(field 'User time')
sys=$(field 'System time')
peak=$(field 'Maximum resident set size')
lines=$(wc -l <"$out/stdout.txt")
# The last line skbtrace said: "tracing N probes", or its error (with the
# line after it where it goes on there, as -v's verifier errors do).
last=$(awk '/^skbtrace: / {l = $0; n = NR} NR == n + 1 && l ~ /:$/ {l = l " " $0} END {print l}' "$out/stderr.txt")
programs=$(grep -oE '[0-9]+ probes run in [0-9]+ programs' "$out/stderr.txt" || true)
printf '%d probes (%.1f MB): exit %d in %s (user %s s, sys %s s), peak %d MB, %d lines printed; %s%s\n' \
	"$probes" "$(echo "$size / 1000000" | bc -l)" "$status" "$wall" "$user" "$sys" "$((peak / 1024))" "$lines" \
	"${programs:+$programs; }" "$last"
