#!/bin/bash
# run.sh [-k KERNELS] [-t SECONDS] [-s SCRIPT] [-K] SKBTRACE [CASE...]
#
# Boots each kernel once in QEMU and runs the cases in it with the static
# SKBTRACE (build it with CGO_ENABLED=0): every case's output, then a summary
# per kernel and overall. Exits 0 only if every case passed on every kernel.
#
#   -k  kernels, comma-separated (default 6.1,6.12); see setup.sh
#   -t  wall-clock limit of each VM in seconds (default 1200)
#   -s  run the shell SCRIPT in the guest instead of the cases (/vm/main.sh;
#       its exit status is the VM's); CASE... are then extra files under /vm/
#   -K  keep the run directory (the guest console is console.log there)
#
# CASE... default to test/vm/cases/*.case. The kernels and the busybox base
# come from setup.sh (run here when missing), cached in $VMCACHE (default
# $HOME/.cache/skbtrace-vm). VM_ACCEL=tcg|kvm|auto (default auto: KVM when
# /dev/kvm works and the guest boots within VM_KVM_BOOT_WAIT s, default 60; else TCG). In the guest: busybox, vmtool (built here from
# test/vm/vmtool), veth.ko; proc, sys, debugfs, tracefs, bpffs mounted; lo up.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VMCACHE=${VMCACHE:-$HOME/.cache/skbtrace-vm}
# MODS names the cached bundle of guest modules (setup.sh); a new name whenever
# the list of modules changes, so that caches made before are rebuilt.
MODS=mods3
export VMCACHE PATH=/usr/local/go/bin:$PATH
kernels=6.1,6.12 limit=1200 script="" keep=0
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2; }
while getopts "k:t:s:K" o; do
	case $o in
	k) kernels=$OPTARG ;; t) limit=$OPTARG ;; s) script=$OPTARG ;; K) keep=1 ;; *) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
bin=$1; shift
cases=("$@")
[ -n "$script" ] || [ ${#cases[@]} -gt 0 ] || cases=("$HERE"/cases/*.case)
[ -f "$bin" ] || { echo "run.sh: no skbtrace binary at $bin" >&2; exit 2; }
IFS=, read -r -a kvs <<<"$kernels"
for kv in "${kvs[@]}"; do
	[ -e "$VMCACHE/kernel-$kv" ] && [ -e "$VMCACHE/$MODS-$kv.cpio.gz" ] && [ -e "$VMCACHE/base.cpio.gz" ] ||
		"$HERE/setup.sh" "$kv"
done

run=$(mktemp -d "${TMPDIR:-/tmp}/skbtrace-vm.XXXXXX")
trap '[ $keep = 1 ] || rm -rf "$run"' EXIT
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$run/vmtool" ./test/vm/vmtool)
[ -n "$script" ] || "$run/vmtool" check "${cases[@]}" >/dev/null

accel=${VM_ACCEL:-auto} kvmwait=${VM_KVM_BOOT_WAIT:-60}
if [ "$accel" = auto ]; then
	accel=tcg
	# KVM where it works; a nested host may offer /dev/kvm and fail at the first vCPU.
	[ -r /dev/kvm ] && [ -w /dev/kvm ] && accel=kvm
	# ... and one that hung once is not tried again until the host reboots.
	[ "$(cat "$VMCACHE/kvm-hangs" 2>/dev/null)" = "$(cat /proc/sys/kernel/random/boot_id)" ] && accel=tcg
fi

# boot KV: one VM on kernel KV running /vm/main.sh; its output streams here and
# into $run/out-KV.txt; sets $status (124: past -t; 125: no status) and $why.
boot() {
	local kv=$1 stage="$run/stage-$kv" out="$run/out-$kv.txt" cons="$run/console-$kv.log"
	rm -rf "$stage"
	mkdir -p "$stage/vm/cases" "$stage/usr/local/bin"
	cp "$HERE/init" "$stage/init"
	cp "$bin" "$stage/usr/local/bin/skbtrace"
	cp "$run/vmtool" "$stage/usr/local/bin/vmtool"
	chmod 755 "$stage/init" "$stage/usr/local/bin/"*
	# Scripts the cases run as files (bpftrace's tools): /vm/testdata.
	cp -r "$HERE/testdata" "$stage/vm/testdata"
	if [ -n "$script" ]; then
		cp "$script" "$stage/vm/main.sh"
		[ ${#cases[@]} -eq 0 ] || cp -r "${cases[@]}" "$stage/vm/"
	else
		cp "${cases[@]}" "$stage/vm/cases/"
		echo "exec vmtool run $kv /vm/cases/*.case" >"$stage/vm/main.sh"
	fi
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$run/call-$kv.cpio.gz"
	cat "$VMCACHE/base.cpio.gz" "$VMCACHE/$MODS-$kv.cpio.gz" "$run/call-$kv.cpio.gz" >"$run/initrd-$kv"
	local kernel cpu=max
	kernel=$(ls "$VMCACHE/kernel-$kv"/boot/vmlinuz-*)
	[ "$accel" = kvm ] && cpu=host
	: >"$out"
	: >"$cons"
	timeout --signal=KILL "$limit" qemu-system-x86_64 -name skbtrace-vm -accel "$accel" -cpu $cpu \
		-m 2048 -smp 1 -nodefaults -no-reboot -display none -monitor none \
		-kernel "$kernel" -initrd "$run/initrd-$kv" \
		-append "console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off" \
		-serial "file:$cons" -serial "file:$out" 2>"$run/qemu-$kv.err" &
	local qpid=$! shown=0 size qrc t0=$SECONDS
	while kill -0 $qpid 2>/dev/null; do
		size=$(stat -c %s "$out")
		if [ "$size" -gt "$shown" ]; then tail -c +$((shown + 1)) "$out" | head -c $((size - shown)); shown=$size; fi
		# A nested host may offer a /dev/kvm on which the guest hangs early in
		# boot, silently, at full CPU: KVM boots in seconds, so a guest that has
		# not said VM-BOOTED after $kvmwait s is given up on (TCG is tried next).
		if [ "$accel" = kvm ] && [ $((SECONDS - t0)) -ge "$kvmwait" ] && ! grep -q VM-BOOTED "$out"; then
			kill -KILL $qpid 2>/dev/null
			echo "KVM guest did not boot within $kvmwait s" >>"$run/qemu-$kv.err"
		fi
		sleep 0.5
	done
	# (wait's stderr: a QEMU that aborts, as KVM does on a nested host, is an
	# exit status here, not a job-control message)
	{ wait $qpid; } 2>/dev/null && qrc=0 || qrc=$?
	tail -c +$((shown + 1)) "$out"
	status=$(grep -ao 'VM-EXIT-STATUS [0-9]*' "$out" | tail -n 1 | cut -d' ' -f2 || true)
	why=""
	if [ -z "$status" ]; then
		if [ $qrc -eq 137 ]; then status=124 why="ran past -t $limit s"; else status=125 why="died without a status (qemu exit $qrc)"; fi
	fi
}

failed=() results=()
for kv in "${kvs[@]}"; do
	echo "##### kernel $kv: $(cat "$VMCACHE/kernel-$kv.version"), accel $accel"
	t0=$(date +%s)
	boot "$kv"
	if [ "$accel" = kvm ] && ! grep -q VM-BOOTED "$run/out-$kv.txt"; then
		echo "run.sh: KVM does not work here ($(tail -n 1 "$run/qemu-$kv.err")); TCG from now on"
		accel=tcg
		cat /proc/sys/kernel/random/boot_id >"$VMCACHE/kvm-hangs"
		boot "$kv"
	fi
	secs=$(($(date +%s) - t0))
	if [ -n "$why" ]; then
		echo "run.sh: the VM on $kv $why; last lines of its console:"
		tail -n 30 "$run/console-$kv.log"
		keep=1
	fi
	line=$(grep -a '^SUMMARY ' "$run/out-$kv.txt" | tail -n 1 || true)
	results+=("kernel $kv: ${line:-no summary} (VM status $status, ${secs}s)")
	[ "$status" = 0 ] || failed+=("$kv")
done
echo "##### VM suite"
printf '  %s\n' "${results[@]}"
[ $keep = 0 ] || echo "run.sh: run directory kept: $run"
if [ ${#failed[@]} -gt 0 ]; then
	echo "VM SUITE FAIL on ${failed[*]}"
	exit 1
fi
echo "VM SUITE PASS"
