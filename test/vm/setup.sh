#!/bin/bash
# setup.sh [KERNEL...]: fetches the kernels of the VM suite with apt and builds the
# initramfs parts that do not change between runs, into $VMCACHE
# (default $HOME/.cache/skbtrace-vm). Run by run.sh when something is missing;
# a second call reuses what is there.
#
#   6.1   linux-image-amd64 of bookworm (6.1.x: kprobe, fentry; no CONFIG_FPROBE)
#   6.12  linux-image-amd64 of bookworm-backports (6.12.x: kprobe-multi too)
#
# The .deb is only unpacked (dpkg -x) into the cache: nothing is installed as the
# host's kernel. bookworm-backports is read through a private apt configuration
# under the cache, with the mirror this machine's own apt sources name; the
# host's sources are left as they are. Needs root and apt.
set -euo pipefail
VMCACHE=${VMCACHE:-$HOME/.cache/skbtrace-vm}
# MODS names the cached bundle of guest modules (setup.sh); a new name whenever
# the list of modules changes, so that caches made before are rebuilt.
MODS=mods3
export DEBIAN_FRONTEND=noninteractive
kernels=("$@"); [ ${#kernels[@]} -eq 0 ] && kernels=(6.1 6.12)
mkdir -p "$VMCACHE"/{debs,k}

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
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

# aptopts SUITE: apt options reading only SUITE of the host's mirror, with lists and
# cache under $VMCACHE/apt-SUITE.
aptopts() {
	local d="$VMCACHE/apt-$1" uri
	uri=$(mirror)
	[ -n "$uri" ] || { echo "setup: no Debian mirror in this machine's apt sources" >&2; exit 1; }
	mkdir -p "$d"/{lists/partial,cache/archives/partial,etc/sources.list.d,etc/preferences.d}
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $1 main" >"$d/etc/sources.list"
	echo -o APT::Sandbox::User=root -o Dir::Etc::SourceList="$d/etc/sources.list" -o Dir::Etc::SourceParts="$d/etc/sources.list.d" \
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" \
		-o Dir::Etc::Preferences="$d/etc/preferences" -o Dir::Etc::PreferencesParts="$d/etc/preferences.d"
}

for kv in "${kernels[@]}"; do
	case $kv in
	6.1) suite=bookworm ;;
	6.12) suite=bookworm-backports ;;
	*) echo "setup: unknown kernel $kv (6.1 or 6.12)" >&2; exit 2 ;;
	esac
	if [ -e "$VMCACHE/kernel-$kv" ] && [ -e "$VMCACHE/$MODS-$kv.cpio.gz" ]; then
		echo "setup: kernel $kv cached: $(cat "$VMCACHE/kernel-$kv.version")"
		continue
	fi
	opts=$(aptopts $suite)
	# shellcheck disable=SC2086
	apt-get $opts update -qq
	# shellcheck disable=SC2086
	pkg=$(apt-cache $opts depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	# shellcheck disable=SC2086
	ver=$(apt-cache $opts show "$pkg" | awk '/^Version:/ {print $2; exit}')
	[ -n "$pkg" ] && [ -n "$ver" ] || { echo "setup: no linux-image-amd64 in $suite" >&2; exit 1; }
	dir="$VMCACHE/k/$pkg"
	if [ ! -d "$dir/boot" ]; then
		# shellcheck disable=SC2086
		(cd "$VMCACHE/debs" && apt-get $opts download "$pkg" 2>&1 | grep -v unsandboxed || true)
		dpkg -x "$VMCACHE/debs/${pkg}_"*.deb "$dir"
	fi
	krel=$(ls "$dir/lib/modules")
	# Modules /init loads, in the order of their names here (it loads the
	# files in name order): veth, for cases across two network namespaces;
	# nf_tables and what it needs, for netfilter hooks (vmtool nft); 8021q
	# and what it needs, for VLAN devices.
	m=$(mktemp -d "$VMCACHE/mods.XXXX")
	mkdir -p "$m/lib/modules/$krel/extra"
	for ko in 1-crc32c_generic:crypto/crc32c_generic 2-libcrc32c:lib/libcrc32c 3-nfnetlink:net/netfilter/nfnetlink \
		4-nf_tables:net/netfilter/nf_tables 5-llc:net/llc/llc 6-stp:net/802/stp 7-garp:net/802/garp \
		8-mrp:net/802/mrp 9-8021q:net/8021q/8021q veth:drivers/net/veth; do
		name=${ko%%:*} ko=${ko#*:}
		f=$(ls "$dir/lib/modules/$krel/kernel/$ko".ko* 2>/dev/null | head -n 1) || true
		[ -n "$f" ] || continue
		case $f in
		*.xz) xz -dc "$f" >"$m/lib/modules/$krel/extra/$name.ko" ;;
		*.zst) zstd -qdc "$f" >"$m/lib/modules/$krel/extra/$name.ko" ;;
		*) cp "$f" "$m/lib/modules/$krel/extra/$name.ko" ;;
		esac
	done
	(cd "$m" && find . | cpio -o -H newc --quiet | gzip -1) >"$VMCACHE/$MODS-$kv.cpio.gz"
	rm -rf "$m"
	ln -sfn "$dir" "$VMCACHE/kernel-$kv"
	echo "$pkg $ver" >"$VMCACHE/kernel-$kv.version"
	echo "setup: kernel $kv = $pkg $ver ($krel)"
done

# The base of every initramfs: busybox and its directories.
if [ ! -e "$VMCACHE/base.cpio.gz" ]; then
	r=$(mktemp -d "$VMCACHE/root.XXXX")
	mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,proc,sys,dev,tmp,run,root,vm,etc}
	cp /bin/busybox "$r/bin/busybox"
	echo "root:x:0:0:root:/root:/bin/sh" >"$r/etc/passwd"
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) >"$VMCACHE/base.cpio.gz"
	rm -rf "$r"
fi
