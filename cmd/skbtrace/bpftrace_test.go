package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/internal/syncbuf"
)

// TestBpftraceParity runs each testdata/bpftrace/*.bt under bpftrace and
// skbtrace at once, makes the traffic its header asks for, and checks that
// both printed the same lines, maps included (event lines in any order:
// see canonical). A script's header says:
//
//	// traffic: listen ADDR:PORT; connect ADDR:PORT; ...   (in this order)
//	// lines: N   (event lines to wait for in both outputs)
//
// The scripts get the test's pid as $1.
func TestBpftraceParity(t *testing.T) {
	if _, err := exec.LookPath("bpftrace"); err != nil {
		t.Skip("bpftrace is not installed (apt-get install bpftrace): nothing to compare with")
	}
	files, _ := filepath.Glob("testdata/bpftrace/*.bt")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { bpftraceParity(t, file) })
	}
}

var (
	trafficRe = regexp.MustCompile(`(?m)^// traffic: (.*)$`)
	linesRe   = regexp.MustCompile(`(?m)^// lines: (\d+)$`)
)

// tracer is bpftrace or skbtrace running a script, its output collected.
type tracer struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has ended
	out  syncbuf.Buffer
	err  bytes.Buffer
}

func (t *tracer) ended() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

func (t *tracer) stdout() string { return t.out.String() }

func startTracer(t *testing.T, name string, cmd *exec.Cmd) *tracer {
	t.Helper()
	tr := &tracer{name: name, cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &tr.out, &tr.err
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		cmd.Wait()
		close(tr.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-tr.done
	})
	return tr
}

// waitLines waits until the tracer has printed at least n lines, or fails
// the test after the deadline.
func waitLines(t *testing.T, tr *tracer, n int, deadline time.Time) {
	t.Helper()
	for strings.Count(tr.stdout(), "\n") < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s printed %d of %d lines in time:\n%s\nstderr:\n%s", tr.name, strings.Count(tr.stdout(), "\n"), n, tr.stdout(), tr.err.String())
		}
		if tr.ended() {
			t.Fatalf("%s ended early:\n%s\nstderr:\n%s", tr.name, tr.stdout(), tr.err.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func bpftraceParity(t *testing.T, file string) {
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := linesRe.FindSubmatch(text)
	tm := trafficRe.FindSubmatch(text)
	if m == nil || tm == nil {
		t.Fatalf("%s: no // traffic: or // lines: header", file)
	}
	want, _ := strconv.Atoi(string(m[1]))
	pid := strconv.Itoa(os.Getpid())
	// -B line: bpftrace's output is a pipe here, which it would buffer.
	bt := startTracer(t, "bpftrace", exec.Command("bpftrace", "-B", "line", file, pid))
	skc := exec.Command(os.Args[0])
	skc.Env = append(os.Environ(), "SKBTRACE_ARGS="+file+"\x1f"+pid)
	sk := startTracer(t, "skbtrace", skc)
	// Both are tracing once BEGIN's header is out: bpftrace 0.17's
	// "Attaching N probes..." and the header line; skbtrace's header line
	// (it says "Attached N probes" on stderr, as bpftrace 0.26 does).
	deadline := time.Now().Add(30 * time.Second)
	waitLines(t, bt, 2, deadline)
	waitLines(t, sk, 1, deadline)

	traffic(t, string(tm[1]))

	waitLines(t, bt, 2+want, deadline)
	waitLines(t, sk, 1+want, deadline)
	// Events after the first N (the listeners' closes): wait, bounded,
	// until both have as many and neither has printed more for half a
	// second (a loaded machine delivers the last ones late).
	last, still := -1, time.Now()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		b, s := strings.Count(bt.stdout(), "\n")-1, strings.Count(sk.stdout(), "\n")
		if b != s || b != last {
			last, still = b, time.Now()
			if b != s {
				last = -1
			}
			continue
		}
		if time.Since(still) > 500*time.Millisecond {
			break
		}
	}
	for _, tr := range []*tracer{bt, sk} {
		tr.cmd.Process.Signal(syscall.SIGINT)
	}
	for _, tr := range []*tracer{bt, sk} {
		select {
		case <-tr.done:
			if !tr.cmd.ProcessState.Success() {
				t.Errorf("%s: %v\nstderr:\n%s", tr.name, tr.cmd.ProcessState, tr.err.String())
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("%s did not end on SIGINT", tr.name)
		}
	}
	if got, exp := canonical(sk.stdout()), canonical(as026(withoutAttaching(bt.stdout()))); got != exp {
		t.Errorf("skbtrace printed:\n%s\nbpftrace printed:\n%s", sk.stdout(), bt.stdout())
	}
}

// withoutAttaching is bpftrace 0.17's output without its first line,
// "Attaching N probes...", which bpftrace 0.26 (and skbtrace) says on
// stderr as "Attached N probes".
func withoutAttaching(out string) string {
	if strings.HasPrefix(out, "Attaching ") {
		_, out, _ = strings.Cut(out, "\n")
	}
	return out
}

// The host's bpftrace is 0.17; skbtrace prints as 0.26 does: a
// histogram's header without its trailing blank, stats as a record with no
// empty line after them, one empty line after the last histogram.
var (
	histHead17 = regexp.MustCompile(`(?m)^(@\S*): $`)
	stats17    = regexp.MustCompile(`(?m)^(@.*): count (\d+), average (-?\d+), total (-?\d+)$`)
	statsEnd   = regexp.MustCompile(`(?m)^(@.*: \{ \.count = .* \})\n\n`)
)

// as026 is bpftrace 0.17's maps as bpftrace 0.26 prints them.
func as026(out string) string {
	out = histHead17.ReplaceAllString(out, "$1:")
	out = stats17.ReplaceAllString(out, "$1: { .count = $2, .average = $3, .total = $4 }")
	if strings.HasSuffix(out, "|\n\n\n") {
		// 0.17 ends a last histogram with two empty lines, 0.26 with one.
		out = strings.TrimSuffix(out, "\n")
	}
	return statsEnd.ReplaceAllString(out, "$1\n")
}

// canonical sorts the event lines between the header (BEGIN's line) and
// the maps printed at exit (after two empty lines):
// events of different CPUs reach user space in an order neither tool fixes
// (bpftrace reads one perf buffer per CPU). The rest stays as printed.
func canonical(out string) string {
	head, rest, _ := strings.Cut(out, "\n")
	events, maps, _ := strings.Cut(rest, "\n\n\n")
	lines := strings.Split(events, "\n")
	slices.Sort(lines)
	return head + "\n" + strings.Join(lines, "\n") + "\n\n\n" + maps
}

// traffic makes the connections a header lists: listeners accept and close,
// connects connect (to a listener, or are refused) and close.
func traffic(t *testing.T, spec string) {
	t.Helper()
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for _, step := range strings.Split(spec, ";") {
		verb, addr, _ := strings.Cut(strings.TrimSpace(step), " ")
		switch verb {
		case "listen":
			l, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("listen %s: %v", addr, err)
			}
			listeners = append(listeners, l)
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
		case "connect":
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err == nil {
				// Wait for the server's close, so that every state change
				// of the connection happens before the next step.
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				c.Read(make([]byte, 1))
				c.Close()
			}
		default:
			t.Fatalf("unknown traffic step %q", step)
		}
	}
}

// TestDebianTcpdropBt runs Debian's /usr/sbin/tcpdrop.bt unmodified on a
// connection whose SYNs an nftables output rule drops (IPv4 and IPv6, in a
// network namespace): each drop is one line with the socket's addresses
// and state, then the kernel stack in bpftrace's layout. bpftrace itself
// (0.17 here) cannot run this script: its tracepoint struct for kfree_skb
// fails to compile ("field has incomplete type 'enum skb_drop_reason'").
func TestDebianTcpdropBt(t *testing.T) {
	const script = "/usr/sbin/tcpdrop.bt"
	if _, err := os.Stat(script); err != nil {
		t.Skipf("%s is not installed (apt-get install bpftrace): %v", script, err)
	}
	ns := "skbtcpdrop" + strconv.Itoa(os.Getpid())
	traffic := `set -e; ip netns add ` + ns + `; trap 'ip netns del ` + ns + `' EXIT
ip netns exec ` + ns + ` ip link set lo up
ip netns exec ` + ns + ` nft 'add table inet t; add chain inet t o { type filter hook output priority 0; }; add rule inet t o tcp dport 9999 drop'
ip netns exec ` + ns + ` bash -c 'timeout 0.5 bash -c "echo > /dev/tcp/127.0.0.1/9999"; timeout 0.5 bash -c "echo > /dev/tcp/::1/9999"' 2>/dev/null || true`
	code, out, errs := runCLI(t, "-c", "bash -c "+shellQuote(traffic), script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	// bpftrace 0.26 says "Attached 3 probes" on stderr.
	if len(lines) < 2 || !strings.Contains(errs, "Attached 3 probes\n") || lines[0] != "Tracing tcp drops. Hit Ctrl-C to end." ||
		lines[1] != fmt.Sprintf("%-8s %-8s %-16s %-21s %-21s %-8s", "TIME", "PID", "COMM", "SADDR:SPORT", "DADDR:DPORT", "STATE") {
		t.Fatalf("header:\n%s", out)
	}
	line := regexp.MustCompile(`^\d\d:\d\d:\d\d (\d+) +(\S+) +(\S+):(\d+) +(\S+):9999 +SYN_SENT +$`)
	seen := map[string]bool{}
	for i, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if m[3] != m[5] || (m[3] != "127.0.0.1" && m[3] != "::1") {
			t.Errorf("addresses: %q", l)
		}
		// An empty line, then the stack from the drop, decimal offsets.
		if i+3 >= len(lines) || lines[i+1] != "" || !strings.HasPrefix(lines[i+2], "        sk_skb_reason_drop+") ||
			!regexp.MustCompile(`^        nft_do_chain\+\d+$`).MatchString(lines[i+3]) {
			t.Errorf("no stack after %q:\n%s", l, strings.Join(lines[i:min(i+5, len(lines))], "\n"))
		}
		seen[m[3]] = true
	}
	if !seen["127.0.0.1"] || !seen["::1"] {
		t.Errorf("not both dropped SYNs:\n%s", out)
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
