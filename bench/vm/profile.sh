# bench/vm/profile.sh: a guest script for test/vm/run.sh -s; run it with
#   CGO_ENABLED=0 go build -o /tmp/skbtrace ./cmd/skbtrace
#   flock /tmp/skbtrace-vm.lock test/vm/run.sh -t 2400 -k 6.12 -s bench/vm/profile.sh /tmp/skbtrace
#
# Where attach and detach of --filter over every skb function spend their time,
# per backend (BACKENDS in the guest's environment, default fentry kprobe; the
# script: bench/vm/filter.sh's): every 0.5 s the
# kernel stacks of all of skbtrace's threads are read; a function counts once per
# thread sample it appears in. Threads with an empty stack (running user code)
# count as "user".
sample() { # sample PID FILE
  for t in /proc/$1/task/*; do
    s=$(cat $t/stack 2>/dev/null | awk '{print $2}' | sed 's/+.*//' | sort -u | tr '\n' ' ')
    [ -n "$s" ] || s=user
    echo "$s" >> $2
  done
  echo "--sample" >> $2
}
report() { # report FILE LABEL
  n=$(grep -c -- '--sample' $1)
  echo "### $2: $n samples, $(grep -vc -- '--sample' $1) thread samples; top functions (thread samples containing it):"
  grep -v -- '--sample' $1 | tr ' ' '\n' | grep -v '^$' | sort | uniq -c | sort -rn | head -n 25
}
for b in ${BACKENDS:-fentry kprobe}; do
  rm -f /tmp/att /tmp/det /tmp/err
  t0=$(cut -d" " -f1 /proc/uptime)
  skbtrace -v --progressive=false --backend $b --filter 'udp and dst port 9' > /tmp/out 2>/tmp/err &
  pid=$!
  while kill -0 $pid 2>/dev/null && ! grep -q 'tracing' /tmp/err; do sample $pid /tmp/att; sleep 0.5; done
  t1=$(cut -d" " -f1 /proc/uptime)
  kill -INT $pid
  while kill -0 $pid 2>/dev/null; do sample $pid /tmp/det; sleep 0.5; done
  # The teardown after the prompt: the detach helper's threads.
  while h=$(for c in /proc/[0-9]*/comm; do [ "$(cat $c 2>/dev/null)" = skbtrace-detach ] && basename $(dirname $c); done | head -n 1); [ -n "$h" ]; do sample $h /tmp/det; sleep 0.5; done
  t2=$(cut -d" " -f1 /proc/uptime)
  echo "##### $b: attach $(awk -v a=$t0 -v b=$t1 'BEGIN{print b-a}') s, detach $(awk -v a=$t1 -v b=$t2 'BEGIN{print b-a}') s"
  grep -v '^$' /tmp/err | grep -v 'skipped,' | head -8
  report /tmp/att "$b attach"
  report /tmp/det "$b detach"
done
