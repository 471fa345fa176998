#!/usr/bin/env bash
# bench/vm.sh [KERNELS]: `--filter 'udp and dst port 9'` over every skb function,
# per kernel and backend, in the QEMU VM of test/vm (TCG unless KVM works; one VM
# per kernel): ready, all attached (a progressive start), first event, the cost of
# 20,000 datagrams that do not match and the BPF programs' share of it, Ctrl-C to
# prompt, the teardown after it, and a run started right after another's Ctrl-C
# (bench/vm/filter.sh says each). A benchmark, not a test: it prints the figures
# and puts them into the "Ready in seconds" section of bench/vm.md (which
# bench/run.sh appends to RESULTS.md) and of bench/RESULTS.md, with the commit.
# KERNELS: default 5.10,6.1,6.12,6.12-arm64 (run.sh's names; an arm64 kernel runs
# an arm64 build). SKBTRACE=FILE and SKBTRACE_ARM64=FILE measure given builds
# (an earlier commit's, say) instead of this tree's; LABEL= names them in the
# table; BACKENDS="auto kprobe" measures those rows alone. Run as root; about an
# hour for the four kernels.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
kernels=${1:-5.10,6.1,6.12,6.12-arm64}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin=${SKBTRACE:-$out/skbtrace} binarm=${SKBTRACE_ARM64:-$out/skbtrace-arm64}
[ -n "${SKBTRACE:-}" ] || CGO_ENABLED=0 go build -trimpath -o "$bin" ./cmd/skbtrace
[ -n "${SKBTRACE_ARM64:-}" ] || CGO_ENABLED=0 GOARCH=arm64 go build -trimpath -o "$binarm" ./cmd/skbtrace
label=${LABEL:-$(git describe --always --dirty)}
# One VM at a time on a machine: the lock (VMLOCK= when the caller holds it).
lock=${VMLOCK-/tmp/skbtrace-vm.lock}
# The guest's CPU ahead of other work on the host (builds, tests), which
# would stretch every figure: its QEMU at nice VMNICE (default -15).
(while sleep 2; do for p in $(pgrep -f '^qemu-system'); do renice -n "${VMNICE:--15}" -p "$p" >/dev/null 2>&1; done; done) &
renicer=$!
trap 'kill $renicer 2>/dev/null; rm -rf "$out"' EXIT
# BACKENDS (default all: auto, kprobe-multi, fentry, kprobe) chooses the rows.
echo "${BACKENDS:-auto kprobe-multi fentry kprobe}" >"$out/backends"
${lock:+flock "$lock"} test/vm/run.sh -t 3600 -T 14400 -k "$kernels" -a "$binarm" -s bench/vm/filter.sh "$bin" "$out/backends" | tee "$out/run.txt" || true
# (An arm64 guest's virtio console ends its lines with CR LF.)
sed -i 's/\r$//' "$out/run.txt"
accel=$(awk '/^##### kernel/ {for (i = 1; i < NF; i++) if ($i == "accel") a = $(i + 1)} END {sub(/,$/, "", a); print a}' "$out/run.txt")
if grep -q 'TCG from now on' "$out/run.txt"; then accel=tcg; fi
rows=$(sed -n 's/^ROW \(.*\)$/| \1 |/p' "$out/run.txt")
base=$(sed -n 's/^##### \([^:]*\): 20000 datagrams untraced in \(.*\) s$/\1 \2 s/p' "$out/run.txt" | paste -sd, - | sed 's/,/, /g')
{
	echo "## Ready in seconds: --filter over every skb function, per backend, in a VM (bench/vm.sh)"
	echo
	echo "\`skbtrace -v --backend B --filter 'udp and dst port 9'\` on stock Debian kernels in QEMU ($accel,"
	echo "1 vCPU, at nice ${VMNICE:--15} on a shared 2-CPU host), skbtrace $label, $(date -u +%Y-%m-%d). One run each, seconds."
	echo "ready: start to the \"tracing\" line; all: to the last function attached (a progressive"
	echo "start), else ready; first: a matching datagram to its line; flood: what 20,000 datagrams"
	echo "that do not match cost over the same sender untraced ($base); bpf ns: the"
	echo "programs' own run time per run, and runs a datagram (run-time statistics); stop: Ctrl-C"
	echo "to prompt; teardown: the detach helper's work after it; second: a run started right"
	echo "after another's Ctrl-C, start to \"tracing\". Rerun: \`bash bench/vm.sh\` (root; about an hour)."
	echo
	echo "| kernel | backend | attached | ready | all | first | flood | bpf ns | runs | stop | teardown | second |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	echo "$rows"
} >"$out/section.md"
# Replace the section in bench/vm.md (the VM figures and notes, which
# bench/run.sh appends to RESULTS.md) and in RESULTS.md; other sections stay.
replace() { # replace FILE: FILE with the section replaced (or appended)
	touch "$1"
	awk -v sect="$out/section.md" -v head="## Ready in seconds: --filter over every skb function, per backend, in a VM (bench/vm.sh)" '
	$0 == head {skip = 1; while ((getline l < sect) > 0) print l; print ""; done = 1; next}
	skip && /^## / {skip = 0}
	!skip {print}
	END {if (!done) {print ""; while ((getline l < sect) > 0) print l}}' "$1" >"$out/replaced"
	cp "$out/replaced" "$1"
}
[ -n "${NORESULTS:-}" ] || { replace bench/vm.md; replace bench/RESULTS.md; }
cat "$out/section.md"
