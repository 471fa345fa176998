package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/internal/syncbuf"
)

// bpfObjects counts the BPF programs, maps and links in the kernel.
type bpfObjects struct{ progs, maps, links int }

func countBPF(t *testing.T) bpfObjects {
	t.Helper()
	var n bpfObjects
	for id := ebpf.ProgramID(0); ; n.progs++ {
		next, err := ebpf.ProgramGetNextID(id)
		if err != nil {
			break
		}
		id = next
	}
	for id := ebpf.MapID(0); ; n.maps++ {
		next, err := ebpf.MapGetNextID(id)
		if err != nil {
			break
		}
		id = next
	}
	it := new(link.Iterator)
	for it.Next() {
		n.links++
	}
	it.Close()
	return n
}

// waitNoLeak waits, up to 10 seconds, for the kernel to free what the
// child held: the counts come back to what they were before it started.
// The kernel frees programs and maps a moment after their last file closes.
func waitNoLeak(t *testing.T, before bpfObjects) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		now := countBPF(t)
		if now.progs <= before.progs && now.maps <= before.maps && now.links <= before.links {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("BPF objects left: before %+v, after %+v", before, now)
			return
		}
		time.Sleep(20 * time.Millisecond) // polling the kernel's free, bounded above
	}
}

// child is skbtrace running as a child process of the test binary.
type child struct {
	cmd     *exec.Cmd
	stdout  *os.File // read end of the child's stdout
	stderr  syncbuf.Buffer
	tracing chan struct{} // closed when "tracing N probes" (or "Attached N probes") is on stderr
	exited  chan struct{}
	out     bytes.Buffer // what was read from stdout
}

// startChild runs skbtrace with args; shell, when set, is a sh prefix
// (such as `trap "" INT;`) before it is exec'd.
func startChild(t *testing.T, shell string, args ...string) *child {
	t.Helper()
	c := &child{tracing: make(chan struct{}), exited: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0])
	if shell != "" {
		c.cmd = exec.Command("/bin/sh", "-c", shell+` exec "$0"`, os.Args[0])
	}
	c.cmd.Env = append(os.Environ(), "SKBTRACE_ARGS="+strings.Join(args, "\x1f"))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdout = r
	c.cmd.Stdout = w
	er, ew := io.Pipe()
	c.cmd.Stderr = ew
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() {
		sc := bufio.NewScanner(er)
		once := sync.Once{}
		for sc.Scan() {
			fmt.Fprintln(&c.stderr, sc.Text())
			// skbtrace's line, or bpftrace's for a bpftrace program.
			if strings.Contains(sc.Text(), "skbtrace: tracing ") || strings.HasPrefix(sc.Text(), "Attached ") {
				once.Do(func() { close(c.tracing) })
			}
		}
	}()
	go func() {
		c.cmd.Wait()
		ew.Close()
		close(c.exited)
	}()
	return c
}

// drain reads the child's stdout to its end, in the background.
func (c *child) drain() chan struct{} {
	done := make(chan struct{})
	go func() {
		io.Copy(&c.out, c.stdout)
		close(done)
	}()
	return done
}

// wait waits up to d for the child to exit, killing it after that, and
// returns its exit status (128+N for a death by signal N).
func (c *child) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-c.exited:
	case <-time.After(d):
		c.cmd.Process.Kill()
		<-c.exited
		t.Errorf("skbtrace did not exit within %v; stderr:\n%s", d, c.stderr.String())
	}
	ws := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

func (c *child) waitTracing(t *testing.T) {
	t.Helper()
	select {
	case <-c.tracing:
	case <-c.exited:
		t.Fatalf("skbtrace exited before tracing: %s", c.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("skbtrace not tracing after 30 s: %s", c.stderr.String())
	}
}

// endScript counts in BEGIN and says when END runs.
const endScript = `BEGIN { @begin = count() } tracepoint:skb:kfree_skb { @drops = count() } END { printf("END ran\n") }`

// TestLifecycle ends skbtrace each way it can end, and checks that END ran,
// the maps printed, the exit status, and that nothing is left in the
// kernel: as many BPF programs, maps and links as before.
func TestLifecycle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		signals []syscall.Signal // sent once tracing, in order
		code    int
		want    []string // on stdout
	}{
		{"SIGINT", []string{"-e", endScript}, []syscall.Signal{syscall.SIGINT}, 0, []string{"END ran\n", "@begin: 1\n"}},
		{"SIGTERM", []string{"-e", endScript}, []syscall.Signal{syscall.SIGTERM}, 0, []string{"END ran\n", "@begin: 1\n"}},
		{"SIGHUP", []string{"-e", endScript}, []syscall.Signal{syscall.SIGHUP}, 0, []string{"END ran\n", "@begin: 1\n"}},
		{"-c exits 0", []string{"-e", endScript, "-c", "true"}, nil, 0, []string{"END ran\n", "@begin: 1\n"}},
		{"-c exits 3", []string{"-e", endScript, "-c", "exit 3"}, nil, 3, []string{"END ran\n", "@begin: 1\n"}},
		{"-c killed", []string{"-e", endScript, "-c", "kill -KILL $$"}, nil, 128 + 9, []string{"END ran\n", "@begin: 1\n"}},
		{"exit()", []string{"-e", `BEGIN { @begin = count() } interval:ms:10 { @ticks = count(); exit() } END { printf("END ran\n") }`},
			nil, 0, []string{"END ran\n", "@begin: 1\n", "@ticks: "}},
		{"--duration", []string{"-e", endScript, "--duration", "300ms"}, nil, 0, []string{"END ran\n", "@begin: 1\n"}},
		{"-o FILE", []string{"-e", endScript, "-o", "OUT"}, []syscall.Signal{syscall.SIGINT}, 0, []string{"END ran\n", "@begin: 1\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := countBPF(t)
			args := tc.args
			outFile := ""
			for i, a := range args {
				if a == "OUT" {
					outFile = filepath.Join(t.TempDir(), "out")
					args = append([]string{}, args...)
					args[i] = outFile
				}
			}
			c := startChild(t, "", args...)
			drained := c.drain()
			c.waitTracing(t)
			for _, sig := range tc.signals {
				c.cmd.Process.Signal(sig)
			}
			code := c.wait(t, 20*time.Second)
			<-drained
			out := c.out.String()
			if outFile != "" {
				b, _ := os.ReadFile(outFile)
				out = string(b)
			}
			if code != tc.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tc.code, c.stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in the output:\n%s\nstderr:\n%s", w, out, c.stderr.String())
				}
			}
			waitNoLeak(t, before)
		})
	}
}

// TestSignalDuringLoad sends SIGINT while skbtrace loads its programs, to a
// process started with SIGINT ignored as a script's `skbtrace ... &` is:
// the signal is not lost, and tracing stops cleanly once attached.
func TestSignalDuringLoad(t *testing.T) {
	before := countBPF(t)
	c := startChild(t, `trap "" INT;`, "-e", endScript)
	drained := c.drain()
	// Loading has begun when the process holds its first BPF map.
	deadline := time.Now().Add(20 * time.Second)
	for !holdsBPF(c.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatalf("skbtrace never loaded: %s", c.stderr.String())
		}
		time.Sleep(100 * time.Microsecond) // polling /proc, bounded above
	}
	c.cmd.Process.Signal(syscall.SIGINT)
	code := c.wait(t, 20*time.Second)
	<-drained
	if code != 0 || !strings.Contains(c.out.String(), "END ran\n") || !strings.Contains(c.out.String(), "@begin: 1\n") {
		t.Errorf("exit status %d, stdout %q, stderr:\n%s", code, c.out.String(), c.stderr.String())
	}
	waitNoLeak(t, before)
}

// holdsBPF reports whether process pid has a BPF map or program open.
func holdsBPF(pid int) bool {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "anon_inode:bpf-") {
			return true
		}
	}
	return false
}

// TestSecondSignalExitsAtOnce stops skbtrace while nothing reads its
// output: the first signal starts the orderly end, which waits for the
// reader; a second one exits at once, with 128+N, leaving nothing behind.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	before := countBPF(t)
	line := strings.Repeat("x", 200)
	c := startChild(t, "", "-e", `interval:ms:1 { printf("`+line+`\n") } END { printf("END ran\n") }`)
	c.waitTracing(t)
	// Wait for the pipe to fill: skbtrace is then stuck writing. Full is
	// nearly 64 KiB that stays the same for 100 ms, while the script
	// makes 20 KiB of lines in that time.
	deadline := time.Now().Add(20 * time.Second)
	last, same := 0, 0
	for same < 5 {
		n, err := unix.IoctlGetInt(int(c.stdout.Fd()), unix.TIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		if n == last && n >= 60000 {
			same++
		} else {
			same = 0
		}
		last = n
		if time.Now().After(deadline) {
			t.Fatalf("the output pipe holds %d bytes after 20 s", n)
		}
		time.Sleep(20 * time.Millisecond) // polling the pipe, bounded above
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		t.Fatalf("exited (%v) at the first signal with the output stuck: %s", c.cmd.ProcessState, c.stderr.String())
	case <-time.After(200 * time.Millisecond): // the first signal must not end it: nothing to wait on
	}
	c.cmd.Process.Signal(syscall.SIGINT)
	code := c.wait(t, 5*time.Second)
	if code != 128+int(syscall.SIGINT) {
		t.Errorf("exit status %d, want %d; stderr:\n%s", code, 128+int(syscall.SIGINT), c.stderr.String())
	}
	if !strings.Contains(c.stderr.String(), "again: exiting without waiting for the output") {
		t.Errorf("stderr does not say why: %s", c.stderr.String())
	}
	c.stdout.Close()
	waitNoLeak(t, before)
}

// TestClosedStdout runs skbtrace with its output closed: the first write
// ends it as SIGPIPE ends any filter, promptly, leaving nothing behind.
func TestClosedStdout(t *testing.T) {
	before := countBPF(t)
	c := startChild(t, "", "-e", `BEGIN { printf("hello\n") } tracepoint:skb:kfree_skb { @drops = count() }`)
	c.stdout.Close()
	code := c.wait(t, 20*time.Second)
	if code != 128+int(syscall.SIGPIPE) {
		t.Errorf("exit status %d, want %d (SIGPIPE); stderr:\n%s", code, 128+int(syscall.SIGPIPE), c.stderr.String())
	}
	waitNoLeak(t, before)
}

// TestExitIsPrompt floods a script that calls exit() at its first event:
// no event after the exit() prints (at most one per CPU can precede it in
// the buffer), END still prints, and the -c command is stopped.
func TestExitIsPrompt(t *testing.T) {
	port := closedUDPPort(t)
	helper := sendCommand(fmt.Sprintf("127.0.0.1:%d", port), 20000, 5, 0)
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { printf("event\n"); exit(); printf("after\n") } END { printf("END ran\n") }`, port)
	var out, errb bytes.Buffer
	if code := run([]string{"-e", script, "-c", helper}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	events := strings.Count(out.String(), "event\n")
	if events < 1 || events > runtime.NumCPU() || strings.Contains(out.String(), "after\n") || !strings.HasSuffix(out.String(), "END ran\n") {
		t.Errorf("%d events printed after exit() on %d CPUs; output:\n%s", events, runtime.NumCPU(), out.String())
	}
}
