# kernels.sh, sourced by setup.sh and run.sh: what a kernel spec (-k) names.
#
# A spec is a short name, or a Debian suite with an optional architecture:
#
#   5.10        bullseye             linux-image-amd64 (5.10.x)
#   6.1         bookworm             linux-image-amd64 (6.1.x)
#   6.12        bookworm-backports   linux-image-amd64 (6.12.x)
#   6.12-arm64  bookworm-backports   linux-image-arm64 (6.12.x, qemu-system-aarch64 -M virt)
#   SUITE       SUITE/amd64, e.g. trixie, sid
#   SUITE/ARCH  linux-image-ARCH of SUITE, ARCH amd64 or arm64, e.g. trixie/arm64
#
# The spec as given is the kernel's label: the KERNEL of vmtool run and of a
# case's [LABEL] condition.
#
# kspec SPEC sets ksuite, karch and kkey (the spec as a file name: "/" is "-",
# the name of its files in $VMCACHE); it fails with a message on stderr.
kspec() {
	local s=$1
	case $s in
	5.10) s=bullseye ;;
	6.1) s=bookworm ;;
	6.12) s=bookworm-backports ;;
	6.12-arm64) s=bookworm-backports/arm64 ;;
	esac
	ksuite=${s%%/*} karch=amd64
	[[ $s != */* ]] || karch=${s#*/}
	kkey=${1//\//-}
	if ! [[ $ksuite =~ ^[a-z][a-z0-9.-]*$ ]] || ! [[ $karch =~ ^(amd64|arm64)$ ]]; then
		echo "kernel spec $1: 5.10, 6.1, 6.12, 6.12-arm64, a Debian suite (trixie) or SUITE/ARCH (trixie/arm64; ARCH amd64 or arm64)" >&2
		return 2
	fi
}
