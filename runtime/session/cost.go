package session

import (
	"fmt"
	"strings"
	"time"

	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// Where the kernel has no kprobe-multi, every function of skb:* costs a
// link of its own, to attach and to detach, and with fentry a program of
// its own, verified at each load. Which of fentry and kprobe is quicker
// depends on the kernel, the CPU and the script, so auto weighs them for
// the script at hand (bench/RESULTS.md, "Ready in seconds": the figures
// behind the constants below, measured per function in the VM suite under
// TCG; on real CPUs every figure is smaller, in about the same ratios).

// Shape is what is known of a script's skb: probes before they attach.
type Shape struct {
	// Funcs is the number of functions they attach to.
	Funcs int
	// Insns is the size of the largest skb: program, in instructions: what
	// the verifier checks again for every function with fentry.
	Insns int
}

// Estimate is what attaching a script's skb: probes with one backend is
// expected to cost: the wait to attach, and the teardown after the exit,
// which the next run and the traffic share the kernel with.
type Estimate struct {
	Backend  Backend
	Attach   time.Duration
	Teardown time.Duration
}

// Wait is the estimate's total.
func (e Estimate) Wait() time.Duration { return e.Attach + e.Teardown }

func (e Estimate) String() string {
	return fmt.Sprintf("%s about %v to attach and %v to detach", e.Backend, e.Attach.Round(100*time.Millisecond), e.Teardown.Round(100*time.Millisecond))
}

// costModel holds the per-function costs of one kernel and architecture.
type costModel struct {
	// kprobeAttach and kprobeDetach: a kprobe's perf event, opened and
	// armed through ftrace, then closed (two RCU grace periods).
	kprobeAttach, kprobeDetach time.Duration
	// fentryLink: a trampoline built and patched in; fentryDetach: its
	// removal, one RCU-tasks grace period each since Linux 6.0 gave every
	// trampoline an ftrace_ops of its own.
	fentryLink, fentryDetach time.Duration
	// verifyInsn is the verifier's time per instruction of a program,
	// paid once per function with fentry.
	verifyInsn time.Duration
	// multi: kprobe-multi attaches every function with one link.
	multi, multiPerFunc time.Duration
}

// modelFor gives the per-function costs on an architecture, where each
// fentry trampoline is an ftrace_ops of its own or not (trampolineOps:
// kernel.Discovery's, from BTF). The figures are bench/vm.sh's under TCG
// (bench/RESULTS.md): x86-64 5.10, 6.1 and 6.12, arm64 6.12.
func modelFor(arch string, trampolineOps bool) costModel {
	m := costModel{
		kprobeAttach: 20 * time.Millisecond, kprobeDetach: 25 * time.Millisecond,
		fentryLink: 28 * time.Millisecond, fentryDetach: 30 * time.Millisecond,
		verifyInsn: 25 * time.Microsecond,
		multi:      800 * time.Millisecond, multiPerFunc: 500 * time.Microsecond,
	}
	if arch == "arm64" {
		// kprobes attach through ftrace without rewriting every call
		// site's NOPs again: a fifth of x86-64's time.
		m.kprobeAttach, m.kprobeDetach = 5*time.Millisecond, 18*time.Millisecond
		m.fentryLink = 45 * time.Millisecond
	}
	if trampolineOps {
		m.fentryDetach = 140 * time.Millisecond
		if arch == "arm64" {
			m.fentryDetach = 105 * time.Millisecond
		}
	}
	return m
}

// estimate is what backend b costs for a script of shape sh under model m.
func (m costModel) estimate(b Backend, sh Shape) Estimate {
	n := time.Duration(sh.Funcs)
	e := Estimate{Backend: b}
	switch b {
	case BackendKprobeMulti:
		e.Attach = m.multi + n*m.multiPerFunc
		e.Teardown = m.multi
	case BackendFentry:
		e.Attach = n * (m.fentryLink + time.Duration(sh.Insns)*m.verifyInsn)
		e.Teardown = n * m.fentryDetach
	case BackendKprobe:
		e.Attach = n * m.kprobeAttach
		e.Teardown = n * m.kprobeDetach
	}
	return e
}

// closeCall is how near two estimates are taken as alike: then the
// backend that costs less per call wins.
const closeCall = time.Second

// perCallOrder is the function backends from the lowest cost per call:
// fentry calls the program from its trampoline, a kprobe through ftrace's
// handler with every register saved.
var perCallOrder = []Backend{BackendKprobeMulti, BackendFentry, BackendKprobe}

// pick chooses among the backends that work the one of least wait; where
// the least two are within closeCall, the one that costs less per call.
func (m costModel) pick(works []Backend, sh Shape) (Backend, []Estimate) {
	var ests []Estimate
	for _, b := range works {
		ests = append(ests, m.estimate(b, sh))
	}
	least := leastWait(ests)
	best := -1
	for i, e := range ests {
		if e.Wait() <= least+closeCall && (best < 0 || callRank(e.Backend) < callRank(ests[best].Backend)) {
			best = i
		}
	}
	return ests[best].Backend, ests
}

func callRank(b Backend) int {
	for i, c := range perCallOrder {
		if c == b {
			return i
		}
	}
	return len(perCallOrder)
}

// PickByCost chooses, among the function backends that work on this
// kernel, the one whose estimate for a script of shape sh is least, and
// says why in words (for -v and the auto line). trampolineOps is
// kernel.Discovery's.
func PickByCost(works []Backend, sh Shape, trampolineOps bool) (Backend, string) {
	m := modelFor(kernel.Arch, trampolineOps)
	b, ests := m.pick(works, sh)
	return b, describeEstimates(b, sh, ests)
}

// EstimateFor is what backend b is expected to cost on this kernel for a
// script of shape sh (trampolineOps: kernel.Discovery's).
func EstimateFor(b Backend, sh Shape, trampolineOps bool) Estimate {
	return modelFor(kernel.Arch, trampolineOps).estimate(b, sh)
}

// describeEstimates says what the choice weighed.
func describeEstimates(b Backend, sh Shape, ests []Estimate) string {
	var parts []string
	chosen := ests[0].Wait()
	for _, e := range ests {
		parts = append(parts, e.String())
		if e.Backend == b {
			chosen = e.Wait()
		}
	}
	verdict := fmt.Sprintf("%s waits least", b)
	if chosen > leastWait(ests) || len(ests) > 1 && allClose(ests) {
		verdict = fmt.Sprintf("all within %v of each other, and %s costs least a call", closeCall, b)
	}
	return fmt.Sprintf("estimated for %d functions and a program of %d instructions, as measured in the VM suite: %s; %s",
		sh.Funcs, sh.Insns, strings.Join(parts, ", "), verdict)
}

// leastWait is the least of the estimates' waits.
func leastWait(ests []Estimate) time.Duration {
	least := ests[0].Wait()
	for _, e := range ests {
		least = min(least, e.Wait())
	}
	return least
}

// allClose reports whether every estimate is within closeCall of the least.
func allClose(ests []Estimate) bool {
	least := leastWait(ests)
	for _, e := range ests {
		if e.Wait() > least+closeCall {
			return false
		}
	}
	return true
}
