package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// flood runs skbtrace as a child process on a printf-per-packet script
// while the helper sends `sent` datagrams, and returns what was printed,
// the loss skbtrace reported, and the child's peak RSS in KiB. The child is
// skbtrace as built, not this test binary, whose cluster tests link
// client-go and its schemes: the RSS is skbtrace's own.
func flood(t *testing.T, sent int, extra ...string) (printed, lost int, rssKB int64) {
	t.Helper()
	port := closedUDPPort(t)
	helper := sendCommand(fmt.Sprintf("127.0.0.1:%d", port), sent, 5, 0)
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { printf("%%u\n", len) }`, port)
	args := append([]string{"-e", script, "-c", helper}, extra...)
	cmd := exec.Command(builtSkbtrace(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Not the rusage's Maxrss: exec records the high-water mark of the mm
	// it replaces, and os/exec's child shares this test binary's (vfork),
	// so the child's figure would be this binary's peak whenever that is
	// the larger.
	done := make(chan struct{})
	peak := make(chan int64)
	go func() { peak <- watchHWM(cmd.Process.Pid, done) }()
	err := cmd.Wait()
	close(done)
	rssKB = <-peak
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	printed = strings.Count(out.String(), "13\n")
	if m := regexp.MustCompile(`(\d+) events lost`).FindStringSubmatch(errb.String()); m != nil {
		lost, _ = strconv.Atoi(m[1])
	}
	return printed, lost, rssKB
}

// watchHWM reads the VmHWM (peak RSS, KiB) of process pid every 10 ms until
// done is closed or the process is gone, and returns the last it read
// (the peak is never lower later).
func watchHWM(pid int, done <-chan struct{}) int64 {
	var hwm int64
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return hwm
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > hwm {
					hwm = kb
				}
			}
		}
		select {
		case <-done:
			return hwm
		case <-tick.C:
		}
	}
}

var (
	builtOnce sync.Once
	builtBin  string
	builtErr  error
)

// builtSkbtrace builds skbtrace (go build, once per test binary) and
// returns its path.
func builtSkbtrace(t *testing.T) string {
	t.Helper()
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "skbtrace-bin-")
		if err != nil {
			builtErr = err
			return
		}
		builtBin = filepath.Join(dir, "skbtrace")
		if out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput(); err != nil {
			builtErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtBin
}

// TestFloodLosesNothingSilently floods skbtrace with one event per packet,
// with the ring buffer and with the perf buffer: every packet sent is
// printed or counted in the loss report, and memory stays bounded.
func TestFloodLosesNothingSilently(t *testing.T) {
	const sent = 50000
	for _, events := range []string{"ringbuf", "perf"} {
		printed, lost, rss := flood(t, sent, "--events", events)
		if printed+lost != sent {
			t.Errorf("%s: sent %d, printed %d, reported lost %d", events, sent, printed, lost)
		}
		if rss > 200<<10 {
			t.Errorf("%s: peak RSS %d MiB; want it bounded below 200 MiB", events, rss>>10)
		}
		t.Logf("%s: sent %d: printed %d, lost %d, peak RSS %d MiB", events, sent, printed, lost, rss>>10)
	}
}

// slowWriter holds up the first write, as a stuck terminal would, so that
// the event buffer fills while nothing reads it.
type slowWriter struct {
	once sync.Once
	buf  bytes.Buffer
}

func (w *slowWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { time.Sleep(time.Second) })
	return w.buf.Write(p)
}

// TestForcedLossIsReported fills a small event buffer while the output is
// stuck: events are lost, and each is reported exactly once, naming the
// buffer, on stderr and, in -f json, as a "lost" record on stdout.
func TestForcedLossIsReported(t *testing.T) {
	const sent = 20000
	for _, events := range []string{"ringbuf", "perf"} {
		for _, format := range []string{"text", "json"} {
			port := closedUDPPort(t)
			helper := sendCommand(fmt.Sprintf("127.0.0.1:%d", port), sent, 5, 0)
			script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { printf("%%u\n", len) }`, port)
			out := &slowWriter{}
			var errb bytes.Buffer
			code := run([]string{"-e", script, "-c", helper, "--events", events, "--buffer-size", "4K", "-f", format}, out, &errb)
			if code != 0 {
				t.Fatalf("%s %s: exit %d: %s", events, format, code, errb.String())
			}
			buffer := map[string]string{"ringbuf": "ring buffer", "perf": "perf buffer"}[events]
			printed := strings.Count(out.buf.String(), "13\n")
			if format == "json" {
				printed = strings.Count(out.buf.String(), `"13\n"`)
			}
			m := regexp.MustCompile(`skbtrace: (\d+) events lost: the (.*) was full\n`).FindStringSubmatch(errb.String())
			if m == nil {
				t.Fatalf("%s %s: no loss reported though the output was stuck; printed %d of %d; stderr %s", events, format, printed, sent, errb.String())
			}
			lost, _ := strconv.Atoi(m[1])
			if printed+lost != sent || lost == 0 || m[2] != buffer {
				t.Errorf("%s %s: sent %d, printed %d, reported lost %d in the %q", events, format, sent, printed, lost, m[2])
			}
			if format == "json" {
				want := fmt.Sprintf(`{"data":{"buffer":%q,"events":%d},"type":"lost"}`+"\n", buffer, lost)
				if !strings.Contains(out.buf.String(), want) {
					t.Errorf("%s json: no %s on stdout", events, want)
				}
			}
			t.Logf("%s %s: sent %d: printed %d, lost %d", events, format, sent, printed, lost)
		}
	}
}
