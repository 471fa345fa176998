package bpftrace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// notifyLine is what skbtrace and bpftrace print on stdout once the probes
// are attached, where __BPFTRACE_NOTIFY_PROBES_ATTACHED is set: AFTER
// starts then, and the line is not part of the output checked.
const notifyLine = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"

// attachTimeout is how long a program may take to attach before its
// TIMEOUT starts.
const attachTimeout = 10 * time.Second

var (
	builtOnce sync.Once
	builtBin  string
	builtErr  error
)

// skbtrace builds ./cmd/skbtrace once per test binary and returns its path.
func skbtrace(t *testing.T) string {
	t.Helper()
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "skbtrace-bt-")
		if err != nil {
			builtErr = err
			return
		}
		builtBin = filepath.Join(dir, "skbtrace")
		cmd := exec.Command("go", "build", "-o", builtBin, "./cmd/skbtrace")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			builtErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// TestRuntime runs every case of runtime/* with skbtrace.
func TestRuntime(t *testing.T) {
	runAll(t, func(t *testing.T) string { return skbtrace(t) }, "")
}

// TestCompareBpftrace runs every case with bpftrace itself, where
// SKBTRACE_BPFTRACE names a bpftrace to run (fetch-bpftrace.sh makes one
// from Debian sid's package): a case bpftrace does not pass states
// something bpftrace does not do.
func TestCompareBpftrace(t *testing.T) {
	bin := os.Getenv("SKBTRACE_BPFTRACE")
	if bin == "" {
		t.Skip("SKBTRACE_BPFTRACE is not set: bpftrace is not run beside skbtrace (test/bpftrace/fetch-bpftrace.sh makes one from Debian sid's package)")
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Skipf("%s does not run here: %v: %s", bin, err, out)
	}
	t.Logf("comparing with %s", strings.TrimSpace(string(out)))
	runAll(t, func(*testing.T) string { return bin }, "bpftrace")
}

// runAll runs every topic file's cases with the binary bin gives; as is
// "bpftrace" where the binary is bpftrace's.
func runAll(t *testing.T, bin func(*testing.T) string, as string) {
	runDir(t, "runtime", bin, as)
}

// runDir runs every topic file under dir.
func runDir(t *testing.T, dir string, bin func(*testing.T) string, as string) {
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no topic files under %s/: %v", dir, err)
	}
	if os.Geteuid() != 0 {
		t.Skip("the cases load BPF programs: run as root")
	}
	for _, f := range files {
		cases, err := parseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if as == "bpftrace" && c.noCompare != "" {
						t.Skip("not compared: " + c.noCompare)
					}
					if why := c.skipReason(); why != "" {
						t.Skip(why)
					}
					b := bin(t)
					if why := c.missingFeature(b); why != "" {
						t.Skip(why)
					}
					if c.newPidns {
						t.Skip("NEW_PIDNS: the runner starts no PID namespace")
					}
					res := c.execute(t, b)
					c.check(t, res)
				})
			}
		})
	}
}

// skipReason says why a case does not run on this host, or "".
func (c *testCase) skipReason() string {
	if len(c.arch) > 0 && !slices.Contains(c.arch, runtime.GOARCH) && !slices.Contains(c.arch, unameField(func(u *unix.Utsname) []byte { return u.Machine[:] })) {
		return "ARCH " + strings.Join(c.arch, "|")
	}
	release := unameField(func(u *unix.Utsname) []byte { return u.Release[:] })
	if c.minKernel != "" && versionLess(release, c.minKernel) {
		return "MIN_KERNEL " + c.minKernel + ", this kernel is " + release
	}
	if c.maxKernel != "" && versionLess(c.maxKernel, release) {
		return "MAX_KERNEL " + c.maxKernel + ", this kernel is " + release
	}
	if c.skipIfEnv != "" {
		k, v, _ := strings.Cut(c.skipIfEnv, "=")
		if os.Getenv(k) == v {
			return "SKIP_IF_ENV_HAS " + c.skipIfEnv
		}
	}
	for _, r := range c.requires {
		if err := exec.Command("/bin/sh", "-c", r).Run(); err != nil {
			return fmt.Sprintf("REQUIRES %s: %v", r, err)
		}
	}
	return ""
}

func unameField(f func(*unix.Utsname) []byte) string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(f(&u))
}

// versionLess compares dotted kernel versions by their numbers.
func versionLess(a, b string) bool {
	num := func(s string) []int {
		var out []int
		for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' || r == '+' }) {
			n, err := strconv.Atoi(p)
			if err != nil {
				break
			}
			out = append(out, n)
		}
		return out
	}
	return slices.Compare(num(a), num(b)) < 0
}

// result is what one run printed and how it ended.
type result struct {
	cmd    string
	stdout string
	stderr string
	// both is stdout and stderr as they came, one stream, as bpftrace's
	// runner reads them (2>&1).
	both     string
	code     int
	timedOut bool
}

// argv is the command a case runs: PROG as `BIN -e PROG` (with -f json
// where it expects JSON), RUN through the shell with {{BPFTRACE}} as BIN.
func (c *testCase) argv(bin string, beforePid int) []string {
	if c.prog != "" {
		args := []string{bin}
		if len(c.expects) > 0 && c.expects[0].mode == expectJSON {
			args = append(args, "-f", "json")
		}
		return append(args, "-e", c.prog)
	}
	run := strings.ReplaceAll(c.run, "{{BPFTRACE}}", bin)
	run = strings.ReplaceAll(run, "{{BEFORE_PID}}", strconv.Itoa(beforePid))
	return []string{"/bin/sh", "-c", run}
}

// execute runs a case: BEFORE, the program, AFTER once the program says
// its probes are attached, then CLEANUP; the program is stopped with
// SIGTERM once TIMEOUT has passed since.
func (c *testCase) execute(t *testing.T, bin string) result {
	t.Helper()
	beforePid := 0
	for _, b := range c.before {
		p := startShell(t, b)
		beforePid = p.Process.Pid
	}
	if c.cleanup != "" {
		t.Cleanup(func() { exec.Command("/bin/sh", "-c", c.cleanup).Run() })
	}
	argv := c.argv(bin, beforePid)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), notifyLine+"=1")
	cmd.Env = append(cmd.Env, c.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	var both lockedBuffer
	var stdout io.ReadCloser
	if c.exact() {
		// EXPECT_FILE and EXPECT_JSON read stdout alone.
		p, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout = p
		cmd.Stderr = io.MultiWriter(&stderr, &both)
	} else {
		// One pipe for both, as bpftrace's runner's 2>&1: the lines
		// in the order the program wrote them.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		stdout = r
		cmd.Stdout, cmd.Stderr = w, w
		defer w.Close()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if f, ok := cmd.Stdout.(*os.File); ok {
		f.Close()
	}
	attached := make(chan struct{})
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReader(stdout)
		once := sync.Once{}
		for {
			line, err := r.ReadString('\n')
			if strings.TrimSuffix(line, "\n") == notifyLine {
				once.Do(func() { close(attached) })
			} else {
				out.WriteString(line)
				both.Write([]byte(line))
			}
			if err != nil {
				if err != io.EOF {
					out.WriteString(err.Error())
				}
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() {
		<-done
		exited <- cmd.Wait()
	}()
	res := result{cmd: strings.Join(argv, " ")}
	stop := func() {
		res.timedOut = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-attached:
		if c.after != "" {
			startShell(t, c.after)
		}
		select {
		case waitErr = <-exited:
		case <-time.After(c.timeout):
			stop()
		}
	case <-time.After(attachTimeout + c.timeout):
		stop()
	}
	res.stdout, res.stderr, res.both = out.String(), stderr.String(), both.String()
	res.code = cmd.ProcessState.ExitCode()
	if ee, ok := waitErr.(*exec.ExitError); ok && res.code < 0 {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.code = 128 + int(ws.Signal())
		}
	}
	return res
}

// lockedBuffer is a buffer two goroutines write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startShell starts a BEFORE or AFTER command in its own process group,
// killed with it when the case ends.
func startShell(t *testing.T, command string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("%s: %v", command, err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	return cmd
}
