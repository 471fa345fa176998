package k8stest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// component is one daemon of the harness (containerd, etcd,
// kube-apiserver, kubelet) with its log file.
type component struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the exit status, once done is closed
}

// startComponent starts argv as component name, its output going to
// logPath. The process gets its own process group and dies with the test
// binary (Pdeathsig). The caller registers the kill.
func startComponent(t testing.TB, name, logPath string, argv ...string) *component {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("k8stest: start %s: %v", name, err)
	}
	c := &component{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	return c
}

// exited reports whether the process has ended.
func (c *component) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// failf ends the test naming the component, its state and the tail of its
// log.
func (c *component) failf(t testing.TB, format string, args ...any) {
	t.Helper()
	state := "running"
	if c.exited() {
		state = fmt.Sprintf("exited: %v", c.err)
	}
	t.Fatalf("k8stest: %s: %s (%s); last lines of %s:\n%s", c.name, fmt.Sprintf(format, args...), state, c.log, tail(c.log, 30))
}

// stop sends sig to the process group, and SIGKILL if it has not exited
// after grace; it waits for the exit (at most 10 s more).
func (c *component) stop(sig syscall.Signal, grace time.Duration) {
	if c.exited() {
		return
	}
	syscall.Kill(-c.cmd.Process.Pid, sig)
	if sig != syscall.SIGKILL {
		select {
		case <-c.done:
			return
		case <-time.After(grace):
		}
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
	}
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// run runs a command to its end within timeout and returns its combined
// output, or an error that includes the output.
func run(timeout time.Duration, argv ...string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return out.String(), fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(out.String()))
		}
		return out.String(), nil
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("%s: not done within %s: %s", strings.Join(argv, " "), timeout, strings.TrimSpace(out.String()))
	}
}
