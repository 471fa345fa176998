# bench/vm/packet.sh: a guest script for test/vm/run.sh -s (bench/packet.sh
# vm runs it, with /vm/skbtrace-before, the build of track() before the
# logical packet, and /vm/backends).
#
# The per-datagram cost of track()'s logical packet, per backend: 20,000
# UDP datagrams to a closed port on 127.0.0.1 (vmtool flood; each makes an
# ICMP error too), every skb function traced by
#   plain   skb:* /dport == 10/ { @[func] = count() }
#   track   the same with track() first (the gate at every hop, the joins'
#           fentry and fexit programs)
#   filter  --filter 'udp and dst port 10' (with -o /dev/null), which now
#           follows what it matches (track()), before it did not
# each with this build (now) and with skbtrace-before. One line per row:
# "ROW kernel | backend | script | binary | flood s | bpf ns/datagram |
# program runs/datagram": the flood's seconds (the sender alone took the
# base: ##### line), the BPF programs' run time over the flood (run-time
# statistics) per datagram, and their runs per datagram.
KV=$(cat /vm/kernel)
up() { cut -d" " -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }'; }
helpers() { for c in /proc/[0-9]*/comm; do [ "$(cat "$c" 2>/dev/null)" = skbtrace-detach ] && return 0; done; return 1; }
waithelpers() { while helpers; do sleep 0.2; done; }
flood() { t=$(up); vmtool flood -n 20000 127.0.0.1:10 >/dev/null 2>&1; since "$t"; }
waitline() { while kill -0 "$3" 2>/dev/null && ! grep -q "$2" "$1"; do sleep 0.05; done; grep -q "$2" "$1"; }
stats() { vmtool progstats | sed 's/[a-z]*=//g'; }
chmod +x /vm/skbtrace-before
echo "##### $KV: 20000 datagrams untraced in $(flood) s"
backends="kprobe-multi fentry kprobe"
[ -s /vm/backends ] && backends=$(cat /vm/backends)
for bw in $backends; do
  # BACKEND or BACKEND:SCRIPT,SCRIPT (fentry's teardown takes minutes a run under TCG).
  b=${bw%%:*} whats="plain track filter"
  [ "$b" = "$bw" ] || whats=$(echo "${bw#*:}" | tr , ' ')
  for what in $whats; do
    for bin in now before; do
      exe=skbtrace; [ $bin = before ] && exe=/vm/skbtrace-before
      waithelpers
      case $what in
      plain) $exe --backend "$b" -e 'skb:* /dport == 10/ { @[func] = count() }' >/dev/null 2>/tmp/err & ;;
      track) $exe --backend "$b" -e 'skb:* /dport == 10/ { track(); @[func] = count() }' >/dev/null 2>/tmp/err & ;;
      filter) $exe --backend "$b" -o /dev/null --filter 'udp and dst port 10' 2>/tmp/err & ;;
      esac
      pid=$!
      if ! waitline /tmp/err '^skbtrace: tracing' $pid; then
        echo "##### $KV $b $what $bin: not run: $(grep -v '^ ' /tmp/err | tail -n 1)"
        wait $pid
        continue
      fi
      # The rest attached, where the start is progressive.
      grep -q 'attach while tracing$' /tmp/err && waitline /tmp/err 'more while tracing)$' $pid
      echo 1 >/proc/sys/kernel/bpf_stats_enabled
      set -- $(stats); r0=$2 n0=$3
      f=$(flood)
      set -- $(stats); r1=$2 n1=$3
      echo 0 >/proc/sys/kernel/bpf_stats_enabled
      kill -INT $pid; wait $pid
      grep '^skbtrace: track()' /tmp/err | sed "s/^/##### $KV $b $what $bin: /"
      echo "ROW $KV | $b | $what | $bin | $f | $(( (n1 - n0) / 20000 )) | $(awk -v r=$((r1 - r0)) 'BEGIN { printf "%.1f", r / 20000 }')"
    done
  done
done
