package session

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// Closing a link detaches its program, and the kernel may make that slow:
// an fentry function costs a trampoline update and an RCU-tasks grace
// period (minutes for a thousand functions under emulation), a classic
// tracepoint tens of milliseconds. Once the maps are printed nobody needs
// to wait for it: the links go to a helper process, which closes them while
// the shell prompt returns. The helper is this binary again, started with
// the links' file descriptors and detachEnv; it holds the only references
// left, so closing skbtrace's own copies costs nothing. Nothing stays in
// the kernel once it ends, and since every BPF object is a file
// descriptor, not even if it is killed: the kernel closes them then.

// helperWorkers is how many links the helper closes at once: the kernel
// serializes most of a function probe's removal on its mutexes
// (bench/RESULTS.md's profile), but a kprobe's last RCU grace period comes
// after them, where closes side by side share one; and few keep what an
// attach must wait for short (the closes under way: gate.go).
const helperWorkers = 16

// detachEnv names, in the helper's environment, how many descriptors from 3
// on are links to close; detachVerboseEnv, when set, asks for its figures.
const (
	detachEnv        = "SKBTRACE_DETACH_FDS"
	detachVerboseEnv = "SKBTRACE_DETACH_VERBOSE"
)

// DetachEnv, set to "wait" in skbtrace's environment, has the links
// closed before skbtrace exits, however long it takes, as a script that
// runs one skbtrace after another may want.
const DetachEnv = "SKBTRACE_DETACH"

// DetachHelperName is the helper's process name (its argv[0], and its
// comm once it runs), by which a test or a script can wait for the
// teardown to end.
const DetachHelperName = "skbtrace-detach"

// DetachHelper is the helper's main: where this process was started as one,
// it closes the links it was given and reports true (the caller then exits);
// otherwise it does nothing and reports false. Call it first thing in main.
func DetachHelper() bool {
	n, err := strconv.Atoi(os.Getenv(detachEnv))
	if err != nil || n <= 0 {
		return false
	}
	os.WriteFile("/proc/self/comm", []byte(DetachHelperName), 0)
	// The traffic being traced, and the next run, come first: the
	// helper's own CPU time at the lowest priority, and each close
	// behind the attach gate (gate.go).
	unix.Setpriority(unix.PRIO_PROCESS, 0, 19)
	start := time.Now()
	var fds []int
	for fd := 3; fd < 3+n; fd++ {
		fds = append(fds, fd)
	}
	// Each group's closes go side by side with the others'.
	groups := groupLinks(fds)
	lines := make([]string, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			times := closeAll(g.fds, g.workers)
			lines[i] = fmt.Sprintf("skbtrace: detach helper %d: %s: %s", os.Getpid(), g.name, times.String(time.Since(start)))
		}()
	}
	wg.Wait()
	lines = append(lines, fmt.Sprintf("skbtrace: detach helper %d: %d links closed in %v", os.Getpid(), n, time.Since(start).Round(time.Millisecond)))
	for _, line := range lines {
		reportDetach(line)
		if os.Getenv(detachVerboseEnv) != "" {
			fmt.Fprintln(os.Stderr, line)
		}
	}
	return true
}

// closeAll closes fds, workers at a time, each close behind the attach
// gate, and reports how long the closes took.
func closeAll(fds []int, workers int) *closeTimes {
	times := &closeTimes{workers: min(len(fds), workers)}
	work := make(chan int)
	var wg sync.WaitGroup
	for range times.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gate := openGate()
			if gate >= 0 {
				defer unix.Close(gate)
			}
			for fd := range work {
				t := time.Now()
				waited := gated(gate, func() { unix.Close(fd) })
				times.add(time.Since(t)-waited, waited)
			}
		}()
	}
	for _, fd := range fds {
		work <- fd
	}
	close(work)
	wg.Wait()
	return times
}

// handOff starts the helper with the links' descriptors. It reports the
// helper's pid, or an error where it could not start one (the caller then
// closes the links itself). The links are still the caller's to close:
// cheaply, once the helper holds them. The descriptors go to the helper as
// they are (fork and exec duplicate them), not duplicated here first: a
// session of thousands of kprobes is near the process's limit already.
func handOff(links []link.Link, verbose bool) (int, error) {
	fds, err := linkFDs(links)
	if err != nil {
		return 0, err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	files := []uintptr{null.Fd(), null.Fd(), null.Fd()}
	for _, fd := range fds {
		files = append(files, uintptr(fd))
	}
	env := append(os.Environ(), detachEnv+"="+strconv.Itoa(len(fds)))
	// Its figures go to a terminal only: a pipe's reader would wait for
	// them, as for skbtrace itself.
	if verbose && isTerminal(os.Stderr) {
		env = append(env, detachVerboseEnv+"=1")
		files[2] = os.Stderr.Fd()
	}
	// Named by argv[0] from its first instruction on, as ps shows it; in
	// its own session, so that a Ctrl-C at the prompt is not for it.
	return syscall.ForkExec("/proc/self/exe", []string{DetachHelperName}, &syscall.ProcAttr{
		Env: env, Files: files, Sys: &syscall.SysProcAttr{Setsid: true}})
}

// linkFDs lists the links' descriptors: a BPF link's own, and where a link
// is a perf event with a program set on it (kprobes and tracepoints before
// Linux 5.15, whose descriptor cilium/ebpf does not expose), every perf
// event descriptor of the process (event readers and profile probes are
// closed by then).
func linkFDs(links []link.Link) ([]int, error) {
	var fds []int
	perf := false
	for _, l := range links {
		if r, ok := l.(interface{ FD() int }); ok {
			fds = append(fds, r.FD())
		} else {
			perf = true
		}
	}
	if !perf {
		return fds, nil
	}
	if !kernel.HaveKprobes() {
		// Without the kprobe PMU a kprobe is a tracefs event as well,
		// which only its Close removes.
		return nil, fmt.Errorf("links without descriptors of their own")
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if t, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasSuffix(t, "[perf_event]") {
			fds = append(fds, fd)
		}
	}
	return fds, nil
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
