# tools.sh: the nft and iptables binaries of the guests, sourced by setup.sh
# (which builds the bundle) and run.sh (which appends it to each initramfs).
#
# tools ARCH builds $VMCACHE/$TOOLS-ARCH.cpio.gz: Debian's nftables and
# iptables of the host's own release for ARCH (nft; iptables-nft,
# iptables-legacy, their -save forms, ip6tables; the xtables extensions
# under /usr/lib/TRIPLET/xtables, libxt_comment and libxt_udp among them),
# with every package they depend on, recursively (libc6 and the dynamic
# loader included), fetched through setup.sh's private apt configuration
# (aptopts, download) and unpacked with dpkg -x. netbase gives
# /etc/protocols and /etc/services, which nft and iptables read names from.
# usr/share and glibc's gconv modules are left out. Uses setup.sh's aptopts
# and download.

# TOOLS names the cached bundle: a new name whenever what goes into it
# changes, so that caches made before are rebuilt.
TOOLS=tools2

# toolpkgs OPTS: nftables, iptables and what they depend on (Depends and
# Pre-Depends, recursively; virtual packages left out).
toolpkgs() {
	# shellcheck disable=SC2086
	apt-cache $1 depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances nftables iptables | grep -E '^[a-z0-9]' | sort -u
}

tools() {
	local a=$1 rel opts x f pkgs debs
	local out="$VMCACHE/$TOOLS-$a.cpio.gz"
	[ ! -e "$out" ] || return 0
	rel=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$rel" ] || { echo "setup: no VERSION_CODENAME in /etc/os-release: no suite for nftables:$a" >&2; exit 1; }
	opts=$(aptopts "$rel" "$a")
	# shellcheck disable=SC2086
	apt-get $opts update -qq
	mapfile -t pkgs < <(toolpkgs "$opts")
	[ ${#pkgs[@]} -gt 2 ] || { echo "setup: apt-cache found no dependencies of nftables and iptables in $rel ($a)" >&2; exit 1; }
	echo "setup: nft and iptables for $a: ${pkgs[*]} ($rel)"
	mapfile -t debs < <(download "$opts" "${pkgs[@]}")
	[ ${#debs[@]} -eq ${#pkgs[@]} ] || { echo "setup: nft and iptables for $a: not every package was downloaded" >&2; exit 1; }
	x=$(mktemp -d "$VMCACHE/tools.XXXX")
	for f in "${debs[@]}"; do dpkg -x "$f" "$x"; done
	rm -rf "$x/usr/share" "$x"/usr/lib/*/gconv "$x"/lib/*/gconv "$x/etc/init.d" "$x/etc/default" "$x/usr/bin"
	[ -x "$x/usr/sbin/nft" ] && [ -e "$x/usr/sbin/iptables-nft" ] && [ -e "$x/usr/sbin/iptables-legacy-save" ] ||
		{ echo "setup: nft and iptables for $a: no usr/sbin/nft, iptables-nft or iptables-legacy-save in the packages" >&2; exit 1; }
	(cd "$x" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.new"
	mv "$out.new" "$out"
	rm -rf "$x"
	echo "setup: nft and iptables for $a: $out ($(du -k "$out" | cut -f1) KiB)"
}
