#!/usr/bin/env bash
# bench/vm.sh [KERNELS]: attach and detach time of each function backend on
# every skb function (skb:*), per kernel, measured in the QEMU VM of test/vm
# (TCG unless KVM works; one VM per kernel). A benchmark, not a test: it prints
# the figures and puts them into the "Attach and detach" section of bench/vm.md
# (which bench/run.sh appends to RESULTS.md) and of bench/RESULTS.md.
# Attach is skbtrace's own -v figure (BTF, load, attach of every function); detach
# is SIGINT to exit, as vmtool measures it. KERNELS: default 5.10,6.1,6.12,6.12-arm64
# (run.sh's names; an arm64 kernel runs an arm64 build). Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
kernels=${1:-5.10,6.1,6.12,6.12-arm64}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$out/skbtrace" ./cmd/skbtrace
CGO_ENABLED=0 GOARCH=arm64 go build -trimpath -o "$out/skbtrace-arm64" ./cmd/skbtrace
# One VM at a time on a machine: the lock (VMLOCK= when the caller holds it).
lock=${VMLOCK-/tmp/skbtrace-vm.lock}
${lock:+flock "$lock"} test/vm/run.sh -t 2400 -T 14400 -k "$kernels" -a "$out/skbtrace-arm64" "$out/skbtrace" bench/vm/*.case | tee "$out/run.txt" || true
# (An arm64 guest's virtio console ends its lines with CR LF.)
sed -i 's/\r$//' "$out/run.txt"
accel=$(awk '/^##### kernel/ {for (i = 1; i < NF; i++) if ($i == "accel") a = $(i + 1)} END {sub(/,$/, "", a); print a}' "$out/run.txt")
if grep -q 'TCG from now on' "$out/run.txt"; then accel=tcg; fi
# One row per case: kernel, backend, functions attached, skipped, attach, detach.
rows=$(awk '
	/^=== RUN / {kv = $4; gsub(/[][]/, "", kv); att = ""; skip = 0; secs = ""}
	/stderr\| skbtrace: [0-9]+ functions skipped/ {skip = $3}
	/stderr\| skbtrace: [0-9]+ functions attached with/ {att = $3; be = $7; secs = $9}
	/^TIMES / {split($4, s, "="); ready = s[2]; split($5, s, "="); stop = s[2]; split($6, s, "="); td = s[2]; split($7, s, "="); first = s[2]}
	/^--- (PASS|FAIL) / {
		if (att != "") printf "| %s | %s | %s | %s | %s | %ss | %ss | %ss | %ss |%s\n", kv, be, att, skip, secs, ready, first, stop, td, ($2 == "FAIL" ? " (case failed)" : "")
	}' "$out/run.txt" | sort)
{
	echo "## Attach and detach of every skb function, per backend, in a VM (bench/vm.sh)"
	echo
	echo "skb:* on stock Debian kernels in QEMU ($accel, 1 vCPU, on a shared 2-CPU host),"
	echo "skbtrace $(git describe --always --dirty), $(date -u +%Y-%m-%d). One run each. Attach: skbtrace's"
	echo "\`-v\` figure; ready: skbtrace's start to its \"tracing\" line (BTF, discovery, load, attach);"
	echo "first event: a datagram sent then to its line on stdout; Ctrl-C to prompt: SIGINT to skbtrace's"
	echo "exit (maps printed); teardown: how long its detach helper went on closing the links after"
	echo "that. Rerun: \`bash bench/vm.sh\` (root; about 20 minutes)."
	echo
	echo "| kernel | backend | attached | skipped | attach | ready | first event | Ctrl-C to prompt | teardown after |"
	echo "|---|---|---|---|---|---|---|---|---|"
	echo "$rows"
} >"$out/section.md"
# Replace the section in bench/vm.md (the VM figures and notes, which
# bench/run.sh appends to RESULTS.md) and in RESULTS.md; other sections stay.
replace() { # replace FILE: FILE with the section replaced (or appended)
	touch "$1"
	awk -v sect="$out/section.md" '
	/^## Attach and detach of every skb function/ {skip = 1; while ((getline l < sect) > 0) print l; print ""; done = 1; next}
	skip && /^## / {skip = 0}
	!skip {print}
	END {if (!done) {print ""; while ((getline l < sect) > 0) print l}}' "$1" >"$out/replaced"
	cp "$out/replaced" "$1"
}
replace bench/vm.md
replace bench/RESULTS.md
cat "$out/section.md"
