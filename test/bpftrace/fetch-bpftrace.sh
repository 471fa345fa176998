#!/bin/sh
# fetch-bpftrace.sh [DIR]: fetch Debian sid's bpftrace and the libraries it
# needs (its own glibc, LLVM and clang among them) with apt-get download,
# through a private apt configuration under DIR (the host's sources and
# state are not touched), unpack them there with dpkg -x, and write
# DIR/bpftrace, a wrapper that runs it with sid's loader and libraries.
# Then: SKBTRACE_BPFTRACE=DIR/bpftrace go test ./test/bpftrace/
set -eu
dir=${1:-/tmp/skbtrace-sid-bpftrace}
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/apt/sources.list.d" "$dir/debs" "$dir/root"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" >"$dir/apt/sources.list"
apt() {
	"$@" -o Dir::Etc="$dir/apt" -o Dir::Etc::sourcelist="$dir/apt/sources.list" \
		-o Dir::Etc::sourceparts="$dir/apt/sources.list.d" -o Dir::State::Lists="$dir/apt/lists" \
		-o Dir::Cache="$dir/apt/cache" -o Dir::State::status=/dev/null -o APT::Architecture=amd64
}
apt apt-get update -qq
pkgs=$(apt apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
	--no-replaces --no-enhances bpftrace | grep -v '^ ' | grep -v '<' | sort -u)
cd "$dir/debs"
apt apt-get download -qq $pkgs
for f in *.deb; do dpkg -x "$f" "$dir/root"; done
lib="$dir/root/usr/lib/x86_64-linux-gnu"
cat >"$dir/bpftrace" <<WRAP
#!/bin/sh
exec $lib/ld-linux-x86-64.so.2 --library-path $lib:$dir/root/lib/x86_64-linux-gnu $dir/root/usr/bin/bpftrace "\$@"
WRAP
chmod +x "$dir/bpftrace"
"$dir/bpftrace" --version
