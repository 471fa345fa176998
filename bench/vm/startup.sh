# bench/vm/startup.sh: a guest script for test/vm/run.sh -s; run it with
#   CGO_ENABLED=0 go build -o /tmp/skbtrace ./cmd/skbtrace
#   flock /tmp/skbtrace-vm.lock test/vm/run.sh -t 1800 -k 6.12 -s bench/vm/startup.sh /tmp/skbtrace
#
# Where the start of `--filter 'udp and dst port 9'` over every skb function
# goes, per backend (STARTUP_BACKENDS in /vm/backends if given, default
# kprobe-multi): RUNS starts each (default 3; the first with the BTF and
# discovery caches empty, the others with them filled), each its ready time
# (start to the "tracing" line) and -v's "start-up" line of phases, then
# Ctrl-C and the teardown waited for. A build that writes a CPU profile of its
# start (SKBTRACE_STARTPROFILE, a profiling build's) has it printed in base64
# between "##### profile BEGIN/END" lines.
KV=$(cat /vm/kernel)
up() { cut -d" " -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }'; }
helpers() { for c in /proc/[0-9]*/comm; do [ "$(cat "$c" 2>/dev/null)" = skbtrace-detach ] && return 0; done; return 1; }
waitline() { # waitline FILE REGEX PID: until FILE has a line matching REGEX, or PID ends
  while kill -0 "$3" 2>/dev/null && ! grep -q "$2" "$1"; do sleep 0.05; done
  grep -q "$2" "$1"
}
backends=kprobe-multi
[ -s /vm/backends ] && backends=$(cat /vm/backends)
rm -rf /root/.cache/skbtrace
for b in $backends; do
  for i in $(seq "${RUNS:-3}"); do
    rm -f /tmp/prof
    t0=$(up)
    SKBTRACE_STARTPROFILE=/tmp/prof skbtrace -v --backend "$b" --filter 'udp and dst port 9' >/tmp/out 2>/tmp/err &
    pid=$!
    if ! waitline /tmp/err '^skbtrace: tracing' $pid; then
      echo "##### $KV $b: not run here: $(grep -v '^ ' /tmp/err | tail -n 1)"
      wait $pid
      continue
    fi
    ready=$(since "$t0")
    echo "##### $KV $b run $i: ready in $ready s"
    grep -E '^skbtrace: (start-up|loaded and attached|attach time|[0-9]+ functions (attached|of the))' /tmp/err | sed "s/^/##### $KV $b run $i: /"
    kill -INT $pid; wait $pid
    t=$(up)
    while helpers; do sleep 0.2; done
    echo "##### $KV $b run $i: teardown $(since "$t") s"
    if [ -s /tmp/prof ]; then
      echo "##### profile BEGIN $b $i"; base64 /tmp/prof; echo "##### profile END"
    fi
  done
done
