# bench/vm/teardown.sh: a guest script for test/vm/run.sh -s; run it with
#   CGO_ENABLED=0 go build -o /tmp/skbtrace ./cmd/skbtrace
#   flock /tmp/skbtrace-vm.lock test/vm/run.sh -t 2400 -k 6.1 -s bench/vm/teardown.sh /tmp/skbtrace
#
# What the detach helper's time is, per link close: `--filter 'udp and dst
# port 9'` over every skb function attached whole (--progressive=false),
# then Ctrl-C, and the helper's figures (SKBTRACE_DETACH_REPORT: closes, a
# close's median, 90th percentile and most, their sum against the whole).
# Each line of /vm/backends (default "kprobe") is a backend and, after it,
# environment settings for the run (NAME=VALUE ...).
KV=$(cat /vm/kernel)
up() { cut -d" " -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }'; }
helpers() { for c in /proc/[0-9]*/comm; do [ "$(cat "$c" 2>/dev/null)" = skbtrace-detach ] && return 0; done; return 1; }
waitline() { # waitline FILE REGEX PID: until FILE has a line matching REGEX, or PID ends
  while kill -0 "$3" 2>/dev/null && ! grep -q "$2" "$1"; do sleep 0.05; done
  grep -q "$2" "$1"
}
runs=kprobe
[ -s /vm/backends ] && runs=$(cat /vm/backends)
echo "$runs" | while read -r b settings; do
  [ -n "$b" ] || continue
  rm -f /tmp/report
  t0=$(up)
  env $settings SKBTRACE_DETACH_REPORT=/tmp/report skbtrace -v --progressive=false --backend "$b" --filter "udp and dst port 9" </dev/null >/tmp/out 2>/tmp/err &
  pid=$!
  if ! waitline /tmp/err '^skbtrace: tracing' $pid; then
    echo "##### $KV $b $settings: not run here: $(grep -v '^ ' /tmp/err | tail -n 1)"
    wait $pid
    continue
  fi
  echo "##### $KV $b $settings: ready in $(since "$t0") s; $(grep -E '^skbtrace: [0-9]+ functions attached' /tmp/err)"
  t=$(up); kill -INT $pid; wait $pid
  echo "##### $KV $b $settings: Ctrl-C to prompt $(since "$t") s"
  t=$(up)
  while helpers; do sleep 0.2; done
  echo "##### $KV $b $settings: teardown $(since "$t") s"
  sed "s/^/##### $KV $b $settings: /" /tmp/report
done
