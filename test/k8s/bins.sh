#!/usr/bin/env bash
# bins.sh builds kube-apiserver and kubelet from the Go module proxy
# (k8s.io/kubernetes@VERSION) and caches them, keyed by version, in
# ${SKBTRACE_K8S_CACHE:-$HOME/.cache/skbtrace-k8s}/VERSION/. When both are
# there it does nothing. It prints the directory on stdout.
#
# `go install k8s.io/kubernetes/cmd/...@VERSION` is refused (replace
# directives), so: download the module, copy it somewhere writable, drop
# go.work and the replace block, pin every staging module (k8s.io/* v0.0.0)
# to the matching v0.x release, and build with -mod=mod. Cold, 2 cores:
# about 5 minutes (kube-apiserver needs ~2.4 GB of memory).
set -euo pipefail
VERSION=${K8S_VERSION:-v1.37.2}
STAGING=v0.${VERSION#v1.}
BINS=(kube-apiserver kubelet)
CACHE=${SKBTRACE_K8S_CACHE:-$HOME/.cache/skbtrace-k8s}
OUT=$CACHE/$VERSION
GO=${GO:-go}

have() {
	local b
	for b in "${BINS[@]}"; do [ -x "$OUT/$b" ] || return 1; done
}
if have; then
	echo "$OUT"
	exit 0
fi
mkdir -p "$CACHE"
# One build at a time per cache; a second caller waits, then finds them.
exec 9>"$CACHE/.lock"
flock 9
if have; then
	echo "$OUT"
	exit 0
fi

echo "bins.sh: building ${BINS[*]} $VERSION into $OUT (cold: several minutes)" >&2
dir=$(GOFLAGS=-mod=mod GOWORK=off "$GO" mod download -json "k8s.io/kubernetes@$VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -f "$dir/go.mod" ]; then
	echo "bins.sh: go mod download k8s.io/kubernetes@$VERSION gave no module directory" >&2
	exit 1
fi
src=$(mktemp -d "$CACHE/src.XXXXXX")
trap 'rm -rf "$src"' EXIT
cp -r "$dir/." "$src/"
chmod -R u+w "$src"
rm -f "$src"/go.work "$src"/go.work.sum
# Drop the replace block (and any single-line replace), pin staging modules.
sed -i -e '/^replace (/,/^)/d' -e '/^replace /d' \
	-e "s#^\([[:space:]]*k8s\.io/[^[:space:]]*\) v0\.0\.0\$#\1 $STAGING#" \
	-e "s#^\([[:space:]]*k8s\.io/[^[:space:]]*\) v0\.0\.0 // indirect\$#\1 $STAGING // indirect#" \
	"$src/go.mod"
mkdir -p "$OUT.tmp"
for b in "${BINS[@]}"; do
	start=$(date +%s)
	(cd "$src" && GOWORK=off GOFLAGS= CGO_ENABLED=0 "$GO" build -mod=mod -trimpath \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$VERSION" \
		-o "$OUT.tmp/$b" "./cmd/$b")
	echo "bins.sh: $b built in $(($(date +%s) - start)) s" >&2
done
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
echo "$OUT"
