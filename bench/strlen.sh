#!/usr/bin/env bash
# Prints bench/RESULTS.md's section "Long strings: the scratch area":
# compile time, program size and per-event cost of a script that keeps a
# long string in a variable and prints it, at several max_strlen, with
# skbtrace before the scratch area (BEFORE, a commit: 782ca46^ by
# default) and now (HEAD); and sid's opensnoop.bt, where SIDBT names the
# directory fetch-bpftrace.sh unpacked it to. A copy of bash named
# strbench opens a 1020-byte path N times (ENOENT: it does not exist);
# the script prints each name (the tracepoint fires for every openat on
# the host, the predicate keeps strbench's). Run as root from the
# repository's top, under the kernel lock:
#   flock /tmp/skbtrace-e2e.lock bash bench/strlen.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
n=${1:-20000}
before=${BEFORE:-782ca46^}
sidbt=${SIDBT:-/tmp/sidbt}
tmp=$(mktemp -d)
wt="$tmp/wt"
cleanup() {
	git worktree remove --force "$wt" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
git worktree add -q --detach "$wt" "$before"
(cd "$wt" && go build -o "$tmp/before" ./cmd/skbtrace)
git worktree remove --force "$wt"
git worktree add -q --detach "$wt" HEAD
(cd "$wt" && go build -o "$tmp/after" ./cmd/skbtrace)
git worktree remove --force "$wt"
commit=$(git rev-parse --short HEAD)
beforeCommit=$(git rev-parse --short "$before")
cp /bin/bash "$tmp/strbench"
path="$tmp/missing$(printf '/.%.0s' $(seq 500))/f"
script() { echo "config = { max_strlen = $1${2:+; on_stack_limit = $2} } tracepoint:syscalls:sys_enter_openat /comm == \"strbench\"/ { \$p = str(args.filename); printf(\"%s %s\\n\", comm, \$p) }"; }

# size BIN PROG...: the program's instructions and the verifier's count, or
# the error's first line.
size() {
	local bin=$1
	shift
	local out
	if ! out=$("$bin" -d "$@" 2>&1); then
		echo "does not compile: $(grep -m1 '^[^ ]*:[0-9]*:[0-9]*: ' <<<"$out" | sed 's/^[^ ]*:[0-9]*:[0-9]*: //')"
		return 1
	fi
	# The largest program.
	grep '^program' <<<"$out" | sed 's/.*(\([A-Za-z]*\), \([0-9]*\) instructions, verifier processed \([0-9]*\)).*/\2 instructions, \3 processed/' | sort -n | tail -1
}

# compile BIN PROG...: the median of 5 --dry-run runs (parse, check,
# compile, load through the verifier), in ms.
compile() {
	local bin=$1
	shift
	local ts=()
	for i in 1 2 3 4 5; do
		local s e
		s=$(date +%s%N)
		"$bin" --dry-run "$@" >/dev/null 2>&1
		e=$(date +%s%N)
		ts+=($(((e - s) / 1000000)))
	done
	printf '%s\n' "${ts[@]}" | sort -n | sed -n 3p
}

# events BIN M [LIMIT]: the programs' run time and skbtrace's CPU time per event
# (the median of 3 runs of N opens), and the printed name's length.
events() {
	local bin=$1 m=$2 limit=${3:-} runs=()
	for i in 1 2 3; do
		"$bin" -v -e "$(script "$m" "$limit")" -c "$tmp/strbench -c 'for i in \$(seq $n); do : < $path; done 2>/dev/null'" >"$tmp/out" 2>"$tmp/err"
		local lines
		lines=$(grep -c '^strbench ' "$tmp/out" || true)
		runs+=("$(grep '^skbtrace: overhead: skbtrace [^(]* CPU, its programs' "$tmp/err" | tail -1 |
			sed 's/^skbtrace: overhead: skbtrace \([^ ]*\) CPU, its programs \([^ ]*\) in.*/\2 \1/' |
			awk -v n="$lines" 'function ns(d) { if (d ~ /ms$/) return d * 1e6; if (d ~ /µs$/) return d * 1e3; if (d ~ /ns$/) return d + 0; if (d ~ /s$/) return d * 1e9; return d }
				{ printf "%.0f %.0f %d\n", ns($1) / n, ns($2) / n, n }')")
	done
	local len
	len=$(grep '^strbench ' "$tmp/out" | awk '{ if (length($2) > l) l = length($2) } END { print l + 0 }')
	printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p | awk -v l="$len" '{ printf "%s ns | %s ns | %s | %s", $1, $2, $3, l }'
}

echo "## Long strings: the scratch area (bench/strlen.sh)"
echo
echo "Measured $(date -u +%F) at commit $commit (before: $beforeCommit) on Linux $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')."
echo "The script: \`$(script M)\`;"
echo "a copy of bash named strbench opens a 1020-byte path (not there) $n times. Compile: the median of 5 \`--dry-run\` runs (parse, check,"
echo "compile, load through the verifier). Per event: the programs' run time (bpf_prog_info run_time_ns, BPF stats on for the run; every openat"
echo "of the host runs the program, the predicate keeps strbench's) and skbtrace's CPU time (reading, formatting, printing), over the lines"
echo "printed, the median of 3 runs. Rerun: \`flock /tmp/skbtrace-e2e.lock bash bench/strlen.sh [N]\` (root; about a minute)."
echo
echo "| skbtrace | max_strlen | largest program | compile | programs per event | skbtrace CPU per event | lines | longest name printed |"
echo "|---|---|---|---|---|---|---|---|"
# A row: the binary, max_strlen, and on_stack_limit where the script sets
# it (32: the string and the record in the scratch area, which 200 bytes
# do not need: the scratch area's own cost).
for row in "before 200" "after 200" "after 200 32" "before 1024" "after 1024" "after 4096"; do
	read -r which m limit <<<"$row"
	bin="$tmp/$which"
	label=$m
	[ -n "$limit" ] && label="$m, on_stack_limit $limit"
	if sz=$(size "$bin" -e "$(script "$m" "$limit")"); then
		echo "| $which | $label | $sz | $(compile "$bin" -e "$(script "$m" "$limit")") ms | $(events "$bin" "$m" "$limit") |"
	else
		echo "| $which | $label | $sz | - | - | - | - | - |"
	fi
done
if [ -f "$sidbt/root/usr/sbin/opensnoop.bt" ]; then
	tool="$sidbt/root/usr/sbin/opensnoop.bt"
	echo
	echo "sid's opensnoop.bt (its exit probe, the cwd walk's two loops): before, $(size "$tmp/before" "$tool" || true);"
	echo "after, $(size "$tmp/after" "$tool"), compiled and loaded in $(compile "$tmp/after" "$tool") ms (before: $(compile "$tmp/before" "$tool") ms to the error)."
fi
