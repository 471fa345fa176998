#!/bin/bash
# setup.sh [KERNEL...]: fetches the kernels of the VM suite with apt and builds the
# initramfs parts that do not change between runs, into $VMCACHE
# (default $HOME/.cache/skbtrace-vm). Run by run.sh when something is missing;
# a second call reuses what is there.
#
# KERNEL is a spec of kernels.sh (default: 5.10 6.1 6.12 6.12-arm64):
#
#   5.10        linux-image-amd64 of bullseye (5.10.x: kprobe, fentry; no kprobe-multi)
#   6.1         linux-image-amd64 of bookworm (6.1.x: kprobe, fentry; no CONFIG_FPROBE)
#   6.12        linux-image-amd64 of bookworm-backports (6.12.x: kprobe-multi too)
#   6.12-arm64  linux-image-arm64 of bookworm-backports (6.12.x: kprobe, fentry; no CONFIG_FPROBE)
#   SUITE, SUITE/ARCH   linux-image-ARCH (amd64 or arm64) of any Debian suite: trixie, sid/arm64
#
# The image is what the metapackage linux-image-ARCH of the suite depends on,
# with the linux-image-*, linux-binary-*, linux-modules-* and linux-base-*
# packages that one depends on (newer Debian kernels are split so: vmlinuz and
# the modules under /usr/lib/modules). The .debs are only unpacked (dpkg -x)
# into the cache: nothing is installed as the host's kernel. Each suite is
# read through a private apt configuration under the cache, with the mirror
# this machine's own apt sources name; the host's sources are left as they
# are. An arm64 guest's busybox is busybox-static of arm64 from the host's own
# release, fetched the same way. Needs root and apt.
set -euo pipefail
# The rest is one block, read whole before it runs (an edit under a run does
# not change it).
{
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/kernels.sh"
VMCACHE=${VMCACHE:-$HOME/.cache/skbtrace-vm}
# MODS names the cached bundle of guest modules (setup.sh); a new name whenever
# the list of modules changes, so that caches made before are rebuilt.
MODS=mods10
. "$HERE/tools.sh"
export DEBIAN_FRONTEND=noninteractive
kernels=("$@"); [ ${#kernels[@]} -eq 0 ] && kernels=(5.10 6.1 6.12 6.12-arm64)
mkdir -p "$VMCACHE"/{debs,k}
hostarch=$(dpkg --print-architecture)

need=() arches=()
for kv in "${kernels[@]}"; do
	kspec "$kv" || exit 2
	[[ " ${arches[*]} " == *" $karch "* ]] || arches+=("$karch")
done
for a in "${arches[@]}"; do
	case $a in
	amd64) command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86) ;;
	arm64) command -v qemu-system-aarch64 >/dev/null || need+=(qemu-system-arm) ;;
	esac
done
[ -x /bin/busybox ] && /bin/busybox --list | grep -qx ip || need+=(busybox-static)
command -v cpio >/dev/null || need+=(cpio)
command -v xz >/dev/null || need+=(xz-utils)
command -v zstd >/dev/null || need+=(zstd)
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# mirror: the first Debian URI in this machine's apt sources (deb822 or one-line).
mirror() {
	awk '/^URIs:/ {print $2; exit}
	     /^deb / {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' \
		/etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -n 1
}

# aptopts SUITE ARCH: apt options reading only SUITE of the host's mirror, for
# ARCH only (as the native architecture: names need no :ARCH), with lists and
# cache under $VMCACHE/apt-SUITE (amd64) or apt-SUITE-ARCH.
aptopts() {
	local d="$VMCACHE/apt-$1" uri
	[ "$2" = amd64 ] || d=$d-$2
	uri=$(mirror)
	[ -n "$uri" ] || { echo "setup: no Debian mirror in this machine's apt sources" >&2; exit 1; }
	mkdir -p "$d"/{lists/partial,cache/archives/partial,etc/sources.list.d,etc/preferences.d}
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $1 main" >"$d/etc/sources.list"
	echo -o APT::Sandbox::User=root -o Dir::Etc::SourceList="$d/etc/sources.list" -o Dir::Etc::SourceParts="$d/etc/sources.list.d" \
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" \
		-o Dir::Etc::Preferences="$d/etc/preferences" -o Dir::Etc::PreferencesParts="$d/etc/preferences.d" \
		-o APT::Architecture="$2" -o APT::Architectures::="$2"
}

# kdeps OPTS PKG: the kernel packages PKG depends on (directly): linux-image-N*,
# linux-binary-N*, linux-modules-N*, linux-base-N* (N a digit).
kdeps() {
	# shellcheck disable=SC2086
	apt-cache $1 depends "$2" | awk '$1 ~ /Depends:$/ && $2 ~ /^linux-(image|binary|modules|base)-[0-9]/ {print $2}' | sort -u
}

# download OPTS PKG...: PKG's .debs (the suite's versions) into $VMCACHE/debs;
# prints their paths.
download() {
	local opts=$1 p v f a
	shift
	# (the .deb of the architecture opts name, or all: one package's
	# versions of two architectures share the directory)
	a=$(sed -n 's/.*APT::Architecture=\([^ ]*\).*/\1/p' <<<"$opts")
	# shellcheck disable=SC2086
	(cd "$VMCACHE/debs" && apt-get $opts download "$@" 2>&1 | grep -v unsandboxed || true) >&2
	for p in "$@"; do
		# shellcheck disable=SC2086
		v=$(apt-cache $opts show --no-all-versions "$p" | awk '/^Version:/ {print $2; exit}')
		f=$(ls "$VMCACHE/debs/${p}_${v//:/%3a}_$a.deb" "$VMCACHE/debs/${p}_${v//:/%3a}_all.deb" 2>/dev/null | head -n 1) || true
		[ -n "$f" ] || { echo "setup: apt-get download $p ($v) left no .deb in $VMCACHE/debs" >&2; exit 1; }
		echo "$f"
	done
}

# unpackmod SRC DEST: a module file, decompressed.
unpackmod() {
	case $1 in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# kimage VMLINUZ OUT: the kernel as QEMU's -kernel takes it. An arm64
# vmlinuz is an Image (Debian's so far), maybe gzipped (QEMU would take that
# too), or an EFI zboot image ("zimg" at 4: the compressed Image at the offset
# and of the size at 8 and 12, its compression named at 24), which QEMU before
# 9.1 does not open: those are unpacked into OUT, the rest linked to.
kimage() {
	local magic off size comp
	magic=$(od -An -c -j 4 -N 4 "$1" | tr -d ' ')
	if [ "$(od -An -t x1 -N 2 "$1" | tr -d ' ')" = 1f8b ]; then
		gzip -dc "$1" >"$2.new"
	elif [ "$magic" = zimg ]; then
		off=$(od -An -t u4 -j 8 -N 4 "$1" | tr -d ' ')
		size=$(od -An -t u4 -j 12 -N 4 "$1" | tr -d ' ')
		comp=$(dd if="$1" bs=1 skip=24 count=8 status=none | tr -d '\0')
		case $comp in
		gzip) tail -c +$((off + 1)) "$1" | head -c "$size" | gzip -dc >"$2.new" ;;
		zstd*) tail -c +$((off + 1)) "$1" | head -c "$size" | zstd -qdc >"$2.new" ;;
		xz* | lzma) tail -c +$((off + 1)) "$1" | head -c "$size" | xz -qdc >"$2.new" ;;
		*) echo "setup: $1 is an EFI zboot image compressed with $comp: not unpacked" >&2; exit 1 ;;
		esac
	else
		ln -sfn "$1" "$2"
		return
	fi
	mv "$2.new" "$2"
}

for kv in "${kernels[@]}"; do
	kspec "$kv"
	if [ -e "$VMCACHE/vmlinuz-$kkey" ] && [ -e "$VMCACHE/$MODS-$kkey.cpio.gz" ]; then
		echo "setup: kernel $kv cached: $(cat "$VMCACHE/kernel-$kkey.version")"
		continue
	fi
	# A kernel cached with another bundle of modules (a new MODS): the
	# same kernel's modules bundled again, without asking apt (whose
	# suite may have a newer kernel by now).
	if [ -e "$VMCACHE/vmlinuz-$kkey" ] && [ -e "$VMCACHE/kernel-$kkey.version" ] && [ -d "$VMCACHE/kernel-$kkey/" ]; then
		read -r pkg ver <"$VMCACHE/kernel-$kkey.version"
		dir=$(readlink -f "$VMCACHE/kernel-$kkey")
		cached=1
	else
		cached=""
	fi
	opts=$(aptopts "$ksuite" "$karch")
	# shellcheck disable=SC2086
	if [ -z "$cached" ] && ! apt-get $opts update -qq; then
		rm -rf "$VMCACHE/apt-$ksuite" "$VMCACHE/apt-$ksuite-$karch"
		echo "setup: kernel $kv: apt cannot read suite $ksuite ($karch) of $(mirror)" >&2
		exit 1
	fi
	if [ -z "$cached" ]; then
		pkg=$(kdeps "$opts" "linux-image-$karch" | grep '^linux-image-' | head -n 1) || true
		[ -n "$pkg" ] || { echo "setup: no linux-image-$karch (depending on a linux-image-N...) in $ksuite" >&2; exit 1; }
		# shellcheck disable=SC2086
		ver=$(apt-cache $opts show --no-all-versions "$pkg" | awk '/^Version:/ {print $2; exit}')
		dir="$VMCACHE/k/$pkg"
	fi
	if [ ! -e "$dir/.unpacked" ]; then
		# The image and, one level down, the packages it is split into.
		mapfile -t pkgs < <({ echo "$pkg"; kdeps "$opts" "$pkg"; } | sort -u)
		echo "setup: kernel $kv: ${pkgs[*]} ($ksuite, $karch)"
		mapfile -t debs < <(download "$opts" "${pkgs[@]}")
		[ ${#debs[@]} -eq ${#pkgs[@]} ] || { echo "setup: kernel $kv: not every package was downloaded" >&2; exit 1; }
		rm -rf "$dir"
		for f in "${debs[@]}"; do dpkg -x "$f" "$dir"; done
		touch "$dir/.unpacked"
	fi
	# The kernel and its modules: /boot/vmlinuz-KREL and /lib/modules/KREL
	# (bookworm and before), or /usr/lib/modules/KREL/vmlinuz (sid's split
	# packages).
	mdir=""
	for d in "$dir/lib/modules" "$dir/usr/lib/modules"; do
		[ -d "$d" ] && [ -n "$(ls "$d")" ] && mdir=$d && break
	done
	[ -n "$mdir" ] || { echo "setup: no lib/modules or usr/lib/modules in $dir" >&2; exit 1; }
	krel=$(ls "$mdir" | head -n 1)
	vmlinuz=$(ls "$dir/boot/vmlinu"[xz]-* "$mdir/$krel/vmlinu"[xz] 2>/dev/null | head -n 1) || true
	[ -n "$vmlinuz" ] || { echo "setup: no vmlinuz in $dir (boot/ or $mdir/$krel/)" >&2; exit 1; }
	# Modules /init loads, in the order of their names (it loads the files in
	# name order), each after those it depends on (its modinfo's depends=):
	# veth, for cases across two network namespaces; nf_tables, for netfilter
	# hooks (vmtool nft), with libcrc32c and the crc32c it asks the crypto API
	# for; 8021q, for VLAN devices; vxlan and geneve, for tunnels; sch_ingress
	# (clsact) and cls_bpf, for the tc programs of bpf: cases (bpfload);
	# cls_u32, cls_flower, act_gact, act_police and act_mirred, for classic tc
	# filters and actions (vmtool tc); nft_counter, nft_compat, xt_comment,
	# xt_tcpudp and iptable_filter, for the guest's nft, iptables-nft and
	# iptables-legacy (tools.sh); nft_chain_nat and nft_nat (conntrack and
	# NAT, which testdata/nat.sh loads itself). Those built into this
	# kernel are not files here, and are left out.
	declare -A kpath=() seen=()
	while IFS= read -r f; do
		b=${f##*/} b=${b%%.ko*}
		kpath[${b//-/_}]=$f
	done < <(find "$mdir/$krel/kernel" -name '*.ko*')
	m=$(mktemp -d "$VMCACHE/mods.XXXX")
	# want DIR NAME: NAME into DIR after what it depends on, numbered in order.
	want() {
		local n=${2//-/_} f d
		[ -z "${seen[$n]:-}" ] || return 0
		seen[$n]=1
		f=${kpath[$n]:-}
		[ -n "$f" ] || return 0
		unpackmod "$f" "$m/$n.ko"
		for d in $(tr '\0' '\n' <"$m/$n.ko" | sed -n 's/^depends=//p' | tr , ' '); do want "$1" "$d"; done
		nmod=$((nmod + 1))
		mkdir -p "$1"
		mv "$m/$n.ko" "$1/$(printf %02d $nmod)-$n.ko"
	}
	nmod=0
	for n in crc32c_generic libcrc32c nf_tables 8021q veth vxlan geneve sch_ingress cls_bpf cls_u32 cls_flower act_gact act_police act_mirred nft_counter nft_compat xt_comment xt_tcpudp iptable_filter nft_chain_nat nft_nat; do want "$m/lib/modules/$krel/extra" $n; done
	# IP tunnels (gre, ipip, ip6tnl and what they depend on), which
	# testdata/iptunnels.sh loads itself: /init does not (each makes
	# fallback devices in every namespace from then on).
	for n in ip_gre ipip ip6_tunnel; do want "$m/lib/modules/$krel/tunnel" $n; done
	# The results channel where it is a virtio console (/dev/hvc0: arm64, or
	# VM_OUT=hvc): /init loads these first, those that are modules here.
	seen=() nmod=0
	for n in virtio_pci virtio_console; do want "$m/lib/modules/$krel/virtio" $n; done
	(cd "$m" && find . | cpio -o -H newc --quiet | gzip -1) >"$VMCACHE/$MODS-$kkey.cpio.gz"
	rm -rf "$m"
	if [ -z "$cached" ]; then
		ln -sfn "$dir" "$VMCACHE/kernel-$kkey"
		rm -f "$VMCACHE/vmlinuz-$kkey"
		kimage "$vmlinuz" "$VMCACHE/vmlinuz-$kkey"
		echo "$pkg $ver" >"$VMCACHE/kernel-$kkey.version"
	fi
	echo "setup: kernel $kv = $pkg $ver ($krel, $karch)"
done

# The base of every initramfs of an architecture: its busybox and the
# directories. The host's architecture takes the host's /bin/busybox
# (busybox-static); another takes busybox-static of that architecture from the
# host's own release.
for a in "${arches[@]}"; do
	[ ! -e "$VMCACHE/base-$a.cpio.gz" ] || continue
	r=$(mktemp -d "$VMCACHE/root.XXXX")
	mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,proc,sys,dev,tmp,run,root,vm,etc}
	if [ "$a" = "$hostarch" ]; then
		cp /bin/busybox "$r/bin/busybox"
	else
		rel=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
		[ -n "$rel" ] || { echo "setup: no VERSION_CODENAME in /etc/os-release: no suite for busybox-static:$a" >&2; exit 1; }
		opts=$(aptopts "$rel" "$a")
		# shellcheck disable=SC2086
		apt-get $opts update -qq
		deb=$(download "$opts" busybox-static)
		x=$(mktemp -d "$VMCACHE/bb.XXXX")
		dpkg -x "$deb" "$x"
		bb=$(ls "$x/bin/busybox" "$x/usr/bin/busybox" 2>/dev/null | head -n 1) || true
		[ -n "$bb" ] || { echo "setup: no busybox in $deb" >&2; exit 1; }
		cp "$bb" "$r/bin/busybox"
		rm -rf "$x"
	fi
	echo "root:x:0:0:root:/root:/bin/sh" >"$r/etc/passwd"
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) >"$VMCACHE/base-$a.cpio.gz"
	rm -rf "$r"
	echo "setup: busybox for $a: $VMCACHE/base-$a.cpio.gz"
done
for a in "${arches[@]}"; do tools "$a"; done
exit 0
}
