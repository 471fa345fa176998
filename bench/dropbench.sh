# bench/dropbench.sh, sourced by bench/rules.sh and bench/dropcount.sh with
# ns (the network namespace's name) and basecommit (the default BASE) set:
# builds skbtrace and udpflood into $tmp (removed at exit), and skbtrace
# as of BASE into $base (SKBTRACE_BASE: a binary instead), names this
# commit in $commit, and makes the namespace ns afresh with lo up (deleted
# at exit).
tmp=$(mktemp -d)
cleanup() { ip netns del $ns 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
go build -o "$tmp/skbtrace" ./cmd/skbtrace
go build -o "$tmp/udpflood" ./bench/udpflood
base=${SKBTRACE_BASE:-}
basecommit=${BASE:-$basecommit}
if [ -z "$base" ]; then
	git worktree add -q --detach "$tmp/base" "$basecommit"
	(cd "$tmp/base" && go build -o "$tmp/skbtrace-base" ./cmd/skbtrace)
	git worktree remove --force "$tmp/base"
	base=$tmp/skbtrace-base
fi
commit=$(git rev-parse --short HEAD)
ip netns del $ns 2>/dev/null || true
ip netns add $ns
ip -n $ns link set lo up
