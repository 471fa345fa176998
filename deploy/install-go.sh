# Sourced, as root, from a clone of skbtrace (README's "Try it"):
#   . deploy/install-go.sh
# puts a Go that builds skbtrace on PATH, from what a machine reaching only
# the package registries can get, in this order:
#   1. a Go already installed (on PATH, /usr/local/go, /usr/lib/go-1.N) whose
#      version is at least go.mod's;
#   2. the distribution's newest golang-1.N-go of 1.21 or later (on Debian 12
#      from bookworm-backports, which this adds), run with GOTOOLCHAIN=auto:
#      it fetches the toolchain go.mod names from the Go module proxy;
#   3. that toolchain's zip from the Go module proxy, into /usr/local/go.
# It exports PATH (and GOTOOLCHAIN for 2) in the shell that sources it, and
# returns non-zero, saying why, if none of these works.

# skbtrace_vge A B: version A is B or later (1.25.0, 1.23.4...).
skbtrace_vge() {
	[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

skbtrace_install_go() {
	local need g v pkg gv arch
	need=$(sed -n 's/^go \([0-9][0-9.]*\)$/\1/p' go.mod)
	if [ -z "$need" ]; then
		echo "install-go: no go line in ./go.mod: run this in skbtrace's clone" >&2
		return 1
	fi
	# 1. A Go already installed, new enough.
	for g in "$(command -v go)" /usr/local/go/bin/go /usr/lib/go-1.*/bin/go; do
		[ -x "$g" ] || continue
		v=$(GOTOOLCHAIN=local "$g" env GOVERSION 2>/dev/null)
		v=${v#go}
		if [ -n "$v" ] && skbtrace_vge "$v" "$need"; then
			export PATH="$(dirname "$g"):$PATH"
			echo "install-go: using $g (go$v)"
			return 0
		fi
	done
	# 2. The distribution's Go, 1.21 or later, switching to go.mod's toolchain.
	if command -v apt-get >/dev/null; then
		. /etc/os-release
		if [ "$ID" = debian ] && [ "$VERSION_CODENAME" = bookworm ] &&
			! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
			echo "deb http://deb.debian.org/debian bookworm-backports main" >/etc/apt/sources.list.d/bookworm-backports.list
		fi
		apt-get update -qq
		pkg=$(apt-cache pkgnames golang-1. | grep -E '^golang-1\.[0-9]+-go$' | sort -V | tail -n1)
		gv=${pkg#golang-}
		gv=${gv%-go}
		if [ -n "$pkg" ] && skbtrace_vge "$gv" 1.21 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null; then
			export PATH="/usr/lib/go-$gv/bin:$PATH" GOTOOLCHAIN=auto
			if v=$(go env GOVERSION) && skbtrace_vge "${v#go}" "$need"; then
				echo "install-go: using $pkg, which runs $v from the Go module proxy"
				return 0
			fi
			echo "install-go: $pkg could not switch to go$need" >&2
		fi
	fi
	# 3. The toolchain from the Go module proxy.
	arch=$(uname -m)
	case $arch in
	x86_64) arch=amd64 ;;
	aarch64) arch=arm64 ;;
	esac
	rm -rf /tmp/skbtrace-go /tmp/skbtrace-go.zip &&
		curl -fsSLo /tmp/skbtrace-go.zip "https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go$need.linux-$arch.zip" &&
		unzip -qo /tmp/skbtrace-go.zip -d /tmp/skbtrace-go &&
		rm -rf /usr/local/go && mv /tmp/skbtrace-go/golang.org/toolchain@*/ /usr/local/go &&
		chmod +x /usr/local/go/bin/* /usr/local/go/pkg/tool/*/* || {
		echo "install-go: no Go $need or later: none installed, none from apt, none from proxy.golang.org" >&2
		return 1
	}
	export PATH="/usr/local/go/bin:$PATH"
	echo "install-go: using go$need from proxy.golang.org in /usr/local/go"
}

skbtrace_install_go
