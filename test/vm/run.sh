#!/bin/bash
# run.sh [-k KERNELS] [-a SKBTRACE_ARM64] [-t SECONDS] [-T SECONDS] [-s SCRIPT] [-K] SKBTRACE [CASE...]
#
# Boots each kernel once in QEMU and runs the cases in it with the static
# SKBTRACE (build it with CGO_ENABLED=0; amd64 kernels run it, arm64 ones -a's):
# every case's output, then a summary per kernel and overall. Exits 0 only if
# every case passed on every kernel.
#
#   -k  kernels, comma-separated (default 5.10,6.1,6.12,6.12-arm64): 5.10, 6.1,
#       6.12, 6.12-arm64, or a Debian suite (trixie) or SUITE/ARCH (trixie/arm64);
#       see kernels.sh
#   -a  the static arm64 skbtrace for arm64 kernels (make build-arm64 writes
#       ./skbtrace-arm64); without it, run.sh builds one from this tree
#   -t  wall-clock limit of each VM in seconds (default 1500)
#   -T  wall-clock limit of the whole run in seconds (default 3900: CI's 90
#       minutes less make test's), setup and builds included: a VM gets no more than
#       what is left of it, and one whose turn comes after it is not booted
#   -s  run the shell SCRIPT in the guest instead of the cases (/vm/main.sh;
#       its exit status is the VM's); CASE... are then extra files under /vm/
#   -K  keep the run directory (the guest console is console-KERNEL.log there)
#
# CASE... default to test/vm/cases/*.case. The kernels and the busybox bases
# come from setup.sh (run here when missing), cached in $VMCACHE (default
# $HOME/.cache/skbtrace-vm). amd64 kernels boot in qemu-system-x86_64;
# VM_ACCEL=tcg|kvm|auto (default auto: KVM when /dev/kvm works and the guest
# boots within VM_KVM_BOOT_WAIT s, default 60; else TCG). arm64 kernels boot in
# qemu-system-aarch64 -M virt under TCG (VM_ARM64_CPU, default
# max,pauth-impdef=on). The guest's results come back on a second serial port
# (amd64) or a virtio console (arm64; VM_OUT=hvc: on amd64 too). In the guest:
# busybox, vmtool (built here from test/vm/vmtool for the guest's
# architecture), the modules of setup.sh; proc, sys, debugfs, tracefs, bpffs
# mounted; lo up.
set -euo pipefail
# The rest is one block, read whole before it runs: a run goes on as it began
# when this file is edited under it.
{
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/kernels.sh"
VMCACHE=${VMCACHE:-$HOME/.cache/skbtrace-vm}
# MODS names the cached bundle of guest modules (setup.sh); a new name whenever
# the list of modules changes, so that caches made before are rebuilt.
MODS=mods10
. "$HERE/tools.sh"
export VMCACHE PATH=/usr/local/go/bin:$PATH
start=$(date +%s)
kernels=5.10,6.1,6.12,6.12-arm64 limit=1500 total=3900 script="" keep=0 binarm64=""
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2; }
while getopts "k:a:t:T:s:K" o; do
	case $o in
	k) kernels=$OPTARG ;; a) binarm64=$OPTARG ;; t) limit=$OPTARG ;; T) total=$OPTARG ;;
	s) script=$OPTARG ;; K) keep=1 ;; *) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
bin=$1; shift
cases=("$@")
[ -n "$script" ] || [ ${#cases[@]} -gt 0 ] || cases=("$HERE"/cases/*.case)
hostarch=$(go env GOHOSTARCH)

# elfarch FILE: the architecture of an ELF executable (amd64, arm64), or what it is.
elfarch() {
	local m
	[ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ] || { echo "not an ELF file"; return; }
	m=$(od -An -t x2 -j 18 -N 2 "$1" | tr -d ' ')
	case $m in 003e) echo amd64 ;; 00b7) echo arm64 ;; *) echo "ELF machine 0x$m" ;; esac
}

IFS=, read -r -a kvs <<<"$kernels"
arches=()
for kv in "${kvs[@]}"; do
	kspec "$kv" || exit 2
	[[ " ${arches[*]} " == *" $karch "* ]] || arches+=("$karch")
	[ -e "$VMCACHE/vmlinuz-$kkey" ] && [ -e "$VMCACHE/$MODS-$kkey.cpio.gz" ] && [ -e "$VMCACHE/base-$karch.cpio.gz" ] &&
		[ -e "$VMCACHE/$TOOLS-$karch.cpio.gz" ] ||
		"$HERE/setup.sh" "$kv"
done

run=$(mktemp -d "${TMPDIR:-/tmp}/skbtrace-vm.XXXXXX")
trap '[ $keep = 1 ] || rm -rf "$run"' EXIT
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$run/vmtool" ./test/vm/vmtool)
[ -n "$script" ] || "$run/vmtool" check "${cases[@]}" >/dev/null
# Each guest architecture's vmtool and skbtrace: SKBTRACE for amd64, -a's (or
# one built here) for arm64.
declare -A skbtrace=()
for a in "${arches[@]}"; do
	(cd "$ROOT" && CGO_ENABLED=0 GOARCH=$a go build -o "$run/vmtool-$a" ./test/vm/vmtool)
	# bpfload: the bpf: cases' tc and XDP programs (cilium/ebpf, so not in vmtool).
	(cd "$ROOT" && CGO_ENABLED=0 GOARCH=$a go build -o "$run/bpfload-$a" ./test/vm/bpfload)
	case $a in
	amd64) skbtrace[$a]=$bin ;;
	arm64)
		if [ -z "$binarm64" ]; then
			binarm64=$run/skbtrace-arm64
			echo "run.sh: no -a: building skbtrace for arm64 from $ROOT into $binarm64"
			(cd "$ROOT" && CGO_ENABLED=0 GOARCH=arm64 go build -trimpath \
				-ldflags "-s -w -X main.version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)" \
				-o "$binarm64" ./cmd/skbtrace)
		fi
		skbtrace[$a]=$binarm64
		;;
	esac
	f=${skbtrace[$a]}
	[ -f "$f" ] || { echo "run.sh: no skbtrace binary at $f" >&2; exit 2; }
	fa=$(elfarch "$f")
	[ "$fa" = "$a" ] || { echo "run.sh: $f is $fa, not $a: it cannot run on the $a kernels" >&2; exit 2; }
done

accel=${VM_ACCEL:-auto} kvmwait=${VM_KVM_BOOT_WAIT:-60}
if [ "$accel" = auto ]; then
	accel=tcg
	# KVM where it works; a nested host may offer /dev/kvm and fail at the first vCPU.
	[ -r /dev/kvm ] && [ -w /dev/kvm ] && accel=kvm
	# ... and one that hung once is not tried again until the host reboots.
	[ "$(cat "$VMCACHE/kvm-hangs" 2>/dev/null)" = "$(cat /proc/sys/kernel/random/boot_id)" ] && accel=tcg
fi

# boot KV SECONDS: one VM on kernel KV running /vm/main.sh for at most SECONDS,
# with $vmaccel; its output streams here and into $run/out-KEY.txt; sets $status
# (124: past the limit; 125: no status) and $why.
boot() {
	local kv=$1 limit=$2 stage out cons
	kspec "$kv"
	stage="$run/stage-$kkey" out="$run/out-$kkey.txt" cons="$run/console-$kkey.log"
	rm -rf "$stage"
	mkdir -p "$stage/vm/cases" "$stage/usr/local/bin"
	cp "$HERE/init" "$stage/init"
	cp "${skbtrace[$karch]}" "$stage/usr/local/bin/skbtrace"
	cp "$run/vmtool-$karch" "$stage/usr/local/bin/vmtool"
	cp "$run/bpfload-$karch" "$stage/usr/local/bin/bpfload"
	chmod 755 "$stage/init" "$stage/usr/local/bin/"*
	# Scripts the cases run as files (bpftrace's tools): /vm/testdata.
	cp -r "$HERE/testdata" "$stage/vm/testdata"
	# The kernel's label (its -k spec), for vmtool env and scripts.
	echo "$kv" >"$stage/vm/kernel"
	if [ -n "$script" ]; then
		cp "$script" "$stage/vm/main.sh"
		[ ${#cases[@]} -eq 0 ] || cp -r "${cases[@]}" "$stage/vm/"
	else
		cp "${cases[@]}" "$stage/vm/cases/"
		echo "exec vmtool run '$kv' /vm/cases/*.case" >"$stage/vm/main.sh"
	fi
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$run/call-$kkey.cpio.gz"
	cat "$VMCACHE/base-$karch.cpio.gz" "$VMCACHE/$TOOLS-$karch.cpio.gz" "$VMCACHE/$MODS-$kkey.cpio.gz" "$run/call-$kkey.cpio.gz" >"$run/initrd-$kkey"
	# The kernel's console on the first UART, the results (init's vmout=) on a
	# second one, or on a virtio console where there is no second UART.
	local kernel cpu=max qemu=() append vmout=${VM_OUT:-}
	kernel=$(readlink -f "$VMCACHE/vmlinuz-$kkey")
	case $karch in
	amd64)
		[ "$vmaccel" = kvm ] && cpu=host
		qemu=(qemu-system-x86_64 -accel "$vmaccel" -cpu "$cpu" -serial "file:$cons")
		append="console=ttyS0"
		;;
	arm64)
		qemu=(qemu-system-aarch64 -M virt -accel tcg -cpu "${VM_ARM64_CPU:-max,pauth-impdef=on}" -serial "file:$cons")
		append="console=ttyAMA0" vmout=hvc
		;;
	esac
	if [ "$vmout" = hvc ]; then
		qemu+=(-device virtio-serial-pci -chardev "file,id=vmout,path=$out" -device virtconsole,chardev=vmout)
		append+=" vmout=/dev/hvc0"
	else
		qemu+=(-serial "file:$out")
		append+=" vmout=/dev/ttyS1"
	fi
	: >"$out"
	: >"$cons"
	timeout --signal=KILL "$limit" "${qemu[@]}" -name skbtrace-vm \
		-m 2048 -smp 1 -nodefaults -no-reboot -display none -monitor none \
		-kernel "$kernel" -initrd "$run/initrd-$kkey" \
		-append "$append panic=-1 quiet loglevel=4 mitigations=off" 2>"$run/qemu-$kkey.err" &
	local qpid=$! shown=0 size qrc t0=$SECONDS
	while kill -0 $qpid 2>/dev/null; do
		size=$(stat -c %s "$out")
		# (the file may grow past size meanwhile: head stops at size, and
		# tail's SIGPIPE on the rest, exit 141, is not the suite's failure)
		if [ "$size" -gt "$shown" ]; then { tail -c +$((shown + 1)) "$out" | head -c $((size - shown)); } || true; shown=$size; fi
		# A nested host may offer a /dev/kvm on which the guest hangs early in
		# boot, silently, at full CPU: KVM boots in seconds, so a guest that has
		# not said VM-BOOTED after $kvmwait s is given up on (TCG is tried next).
		if [ "$vmaccel" = kvm ] && [ $((SECONDS - t0)) -ge "$kvmwait" ] && ! grep -q VM-BOOTED "$out"; then
			kill -KILL $qpid 2>/dev/null
			echo "KVM guest did not boot within $kvmwait s" >>"$run/qemu-$kkey.err"
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
		if [ $qrc -eq 137 ]; then status=124 why="ran past its limit, $limit s (-t, -T)"; else status=125 why="died without a status (qemu exit $qrc)"; fi
	fi
}

failed=() results=()
for kv in "${kvs[@]}"; do
	kspec "$kv"
	# Another architecture's guest is emulated (TCG).
	vmaccel=$accel
	[ "$karch" = "$hostarch" ] || vmaccel=tcg
	left=$((total - ($(date +%s) - start)))
	vmlimit=$limit
	[ "$left" -ge "$vmlimit" ] || vmlimit=$left
	if [ "$vmlimit" -le 0 ]; then
		echo "##### kernel $kv: not booted: what ran before it took all of -T $total s"
		results+=("kernel $kv: not booted (-T $total s used up)")
		failed+=("$kv")
		continue
	fi
	echo "##### kernel $kv: $(cat "$VMCACHE/kernel-$kkey.version"), $karch, accel $vmaccel, limit ${vmlimit}s"
	t0=$(date +%s)
	boot "$kv" "$vmlimit"
	if [ "$vmaccel" = kvm ] && ! grep -q VM-BOOTED "$run/out-$kkey.txt"; then
		echo "run.sh: KVM does not work here ($(tail -n 1 "$run/qemu-$kkey.err")); TCG from now on"
		accel=tcg vmaccel=tcg
		cat /proc/sys/kernel/random/boot_id >"$VMCACHE/kvm-hangs"
		left=$((total - ($(date +%s) - start)))
		[ "$left" -ge "$vmlimit" ] || vmlimit=$left
		boot "$kv" "$vmlimit"
	fi
	secs=$(($(date +%s) - t0))
	booted=$(grep -ao 'VM-BOOTED [0-9.]*s' "$run/out-$kkey.txt" | head -n 1 | cut -d' ' -f2 || true)
	if [ -n "$why" ]; then
		echo "run.sh: the VM on $kv $why; last lines of its console:"
		tail -n 30 "$run/console-$kkey.log"
		keep=1
	fi
	line=$(grep -a '^SUMMARY ' "$run/out-$kkey.txt" | tail -n 1 || true)
	results+=("kernel $kv: ${line:-no summary} (VM status $status, ${secs}s, booted at ${booted:-?})")
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
exit 0
}
