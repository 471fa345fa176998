# bench/vm/filter.sh: a guest script for test/vm/run.sh -s (bench/vm.sh runs it).
#
# `--filter 'udp and dst port 9'` over every skb function, per backend (auto
# first, then each function backend the kernel has), as a user meets it:
#   ready     start to the "tracing" line (BTF, discovery, load, attach);
#   all       start to the last function attached, where the start is
#             progressive (its "N functions attached ... more while tracing"
#             line), else ready;
#   first     a matching datagram sent to its line on stdout;
#   flood     what 20,000 datagrams that do not match (to port 10) cost over
#             the same sender untraced, and the BPF programs' own share of it
#             (run-time statistics of a second, 2,000-datagram flood);
#   stop      SIGINT to the prompt (skbtrace's exit);
#   teardown  the prompt to the end of the detach helper;
#   second    auto's: a run started right after the Ctrl-C of another (its
#             teardown going on meanwhile): start to its "tracing" line.
# One line per backend: "ROW kernel backend attached ready all first flood
# bpfns calls stop teardown second", seconds (bpfns: ns per program run; calls:
# program runs per datagram), "-" where not measured.
KV=$(cat /vm/kernel)
FILTER='udp and dst port 9'
up() { cut -d" " -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }'; }
helpers() { for c in /proc/[0-9]*/comm; do [ "$(cat "$c" 2>/dev/null)" = skbtrace-detach ] && return 0; done; return 1; }
waithelpers() { while helpers; do sleep 0.2; done; }
flood() { # flood N PORT: seconds to send N datagrams (from one socket)
  t=$(up); vmtool flood -n "$1" "127.0.0.1:$2" >/dev/null 2>&1; since "$t"
}
waitline() { # waitline FILE REGEX PID: until FILE has a line matching REGEX, or PID ends
  while kill -0 "$3" 2>/dev/null && ! grep -q "$2" "$1"; do sleep 0.05; done
  grep -q "$2" "$1"
}
start() { # start BACKEND N: skbtrace in the background, its output in /tmp/out.N and /tmp/err.N
  skbtrace -v --backend "$1" --filter "$FILTER" >/tmp/out.$2 2>/tmp/err.$2 &
  pid=$!
}
stats() { vmtool progstats | sed 's/[a-z]*=//g'; }
base=$(flood 20000 10)
echo "##### $KV: 20000 datagrams untraced in $base s"
autoused=
# The backends measured: bench/vm.sh's BACKENDS, in /vm/backends.
backends="auto kprobe-multi fentry kprobe"
[ -s /vm/backends ] && backends=$(cat /vm/backends)
for b in $backends; do
  # auto's own row stands for the backend it chose.
  [ "$b" = "$autoused" ] && continue
  waithelpers
  t0=$(up); start "$b" 1
  if ! waitline /tmp/err.1 '^skbtrace: tracing' $pid; then
    echo "##### $KV $b: not run here: $(grep -v '^ ' /tmp/err.1 | tail -n 1)"
    wait $pid
    continue
  fi
  ready=$(since "$t0")
  all=$ready
  if grep -q 'attach while tracing$' /tmp/err.1; then
    waitline /tmp/err.1 'more while tracing)$' $pid && all=$(since "$t0")
  fi
  t=$(up); vmtool send -n 1 127.0.0.1:9 x >/dev/null 2>&1
  first=-; waitline /tmp/out.1 . $pid && first=$(since "$t")
  f=$(flood 20000 10)
  cost=$(awk -v a="$base" -v b="$f" 'BEGIN { printf "%.2f", b - a }')
  echo 1 >/proc/sys/kernel/bpf_stats_enabled
  set -- $(stats); p0=$1 r0=$2 n0=$3
  flood 2000 10 >/dev/null
  set -- $(stats); r1=$2 n1=$3
  echo 0 >/proc/sys/kernel/bpf_stats_enabled
  bpfns=$(awk -v r="$((r1 - r0))" -v n="$((n1 - n0))" 'BEGIN { if (r > 0) printf "%.0f", n / r; else print "-" }')
  calls=$(awk -v r="$((r1 - r0))" 'BEGIN { printf "%.1f", r / 2000 }')
  t=$(up); kill -INT $pid; wait $pid
  stop=$(since "$t")
  t=$(up); waithelpers
  teardown=$(since "$t")
  used=$(sed -n 's/^skbtrace: skb: probes attach with \([a-z-]*\).*/\1/p' /tmp/err.1 | head -n 1)
  attached=$(sed -n 's/^skbtrace: \([0-9]*\) functions attached with.*/\1/p' /tmp/err.1 | tail -n 1)
  grep -E '^skbtrace: (skb: probes attach with|[0-9]+ functions of the packet|[0-9]+ functions (attached|skipped)|attach time|start-up|stop )' /tmp/err.1 | sed "s/^/##### $KV $b: /"
  # A second run right after this one's Ctrl-C: auto's (the other rows'
  # teardowns are minutes each under TCG, and the runs are auto's).
  second=-
  if [ "$b" = auto ]; then
    start "$b" 2
    waitline /tmp/err.2 '^skbtrace: tracing' $pid
    kill -INT $pid; wait $pid
    t0=$(up); start "$b" 3
    waitline /tmp/err.3 '^skbtrace: tracing' $pid && second=$(since "$t0")
    kill -INT $pid; wait $pid
    grep -E '^skbtrace: (start-up|stop )' /tmp/err.2 | sed "s/^/##### $KV $b run 2: /"
    grep -E '^skbtrace: (start-up|stop )' /tmp/err.3 | sed "s/^/##### $KV $b second: /"
    waithelpers
  fi
  name=$b; [ "$b" = auto ] && name="auto ($used)" && autoused=$used
  echo "ROW $KV | $name | ${attached:--} | $ready | $all | $first | +$cost | $bpfns | $calls | $stop | $teardown | $second"
done
