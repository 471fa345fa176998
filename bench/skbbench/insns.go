package main

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/internal/syncbuf"
)

// progSize is one loaded program's size as the kernel reports it.
type progSize struct {
	id   ebpf.ProgramID
	name string
	// xlated is the program after the kernel's rewrites, in 8-byte
	// instruction slots (bpftool's count: a 64-bit load is two).
	xlated int
	// verified is how many instructions the verifier processed.
	verified uint32
}

// lastProgID is the highest program ID loaded now.
func lastProgID() ebpf.ProgramID {
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if err != nil {
			return id
		}
		id = next
	}
}

// progsAfter lists the programs loaded since ID after. Benchmarks hold
// the kernel lock, so these are the measured tool's.
func progsAfter(after ebpf.ProgramID) []progSize {
	var out []progSize
	for id := after; ; {
		next, err := ebpf.ProgramGetNextID(id)
		if err != nil {
			return out
		}
		id = next
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue
		}
		info, err := p.Info()
		p.Close()
		if err != nil {
			continue
		}
		ps := progSize{id: id, name: info.Name}
		if n, err := info.TranslatedSize(); err == nil {
			ps.xlated = n / 8
		}
		ps.verified, _ = info.VerifiedInstructions()
		out = append(out, ps)
	}
}

// attachedSize runs a tool on a script until it says it has attached
// (skbtrace's "tracing"; "Attached" for a bpftrace program, as bpftrace
// 0.24 and later say it, "Attaching" before) and a program it loaded
// is there, reads the size of the largest, and stops the tool.
func attachedSize(tool string, args ...string) (progSize, error) {
	before := lastProgID()
	r, err := startTool(tool, true, "/bin/sleep 10", args...)
	if err != nil {
		return progSize{}, err
	}
	defer r.stop()
	var best progSize
	err = r.until(func(out string) bool {
		if !strings.Contains(out, "tracing ") && !strings.Contains(out, "Attaching ") && !strings.Contains(out, "Attached ") {
			return false
		}
		// bpftrace says it attaches before it loads: wait for the program.
		best = largest(progsAfter(before))
		return best.xlated > 0
	})
	return best, err
}

// largest is the program of most instructions after the kernel's rewrites.
func largest(progs []progSize) progSize {
	var best progSize
	for _, p := range progs {
		if p.xlated > best.xlated {
			best = p
		}
	}
	return best
}

// runningTool is a tracer started on a script, with -c running a sleep
// that keeps it tracing until stop.
type runningTool struct {
	desc   string
	cmd    *exec.Cmd
	out    syncbuf.Buffer
	exited chan error
}

// startTool starts tool with args and -c sleep; its stderr, and with
// stdout its stdout too, go to out.
func startTool(tool string, stdout bool, sleep string, args ...string) (*runningTool, error) {
	r := &runningTool{desc: fmt.Sprintf("%s %v", tool, args), exited: make(chan error, 1)}
	r.cmd = exec.Command(tool, append(args, "-c", sleep)...)
	r.cmd.Stderr = &r.out
	if stdout {
		r.cmd.Stdout = &r.out
	}
	// The sleep outlives the tool's SIGINT and holds its output open.
	r.cmd.WaitDelay = 200 * time.Millisecond
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { r.exited <- r.cmd.Wait() }()
	return r, nil
}

// until polls the tool's output every 20 ms until ready says so, the tool
// ends, or 20 s pass.
func (r *runningTool) until(ready func(out string) bool) error {
	deadline := time.After(20 * time.Second)
	for !ready(r.out.String()) {
		select {
		case err := <-r.exited:
			r.exited <- err
			return fmt.Errorf("%s ended before attaching: %v: %s", r.desc, err, r.out.String())
		case <-deadline:
			return fmt.Errorf("%s: not attached within 20 s", r.desc)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// stop interrupts the tool and waits for it to end.
func (r *runningTool) stop() {
	r.cmd.Process.Signal(syscall.SIGINT)
	<-r.exited
}

// sizeRows are the instruction rows: the same program in both
// languages, on the kfree_skb tracepoint.
var sizeRows = []struct{ what, skbtrace, bpftrace string }{
	{"`@[reason] = count()` on kfree_skb",
		`tracepoint:skb:kfree_skb { @[reason] = count() }`,
		`tracepoint:skb:kfree_skb { @[args->reason] = count(); }`},
	{"`@ = hist(len)`",
		`tracepoint:skb:kfree_skb { @ = hist(len) }`,
		`tracepoint:skb:kfree_skb { @ = hist(((struct sk_buff *)args->skbaddr)->len); }`},
	{"`printf` of len, mark, reason, comm",
		`tracepoint:skb:kfree_skb { printf("%u %u %s %s\n", len, mark, reason, comm) }`,
		`tracepoint:skb:kfree_skb { $s = (struct sk_buff *)args->skbaddr; printf("%u %u %d %s\n", $s->len, $s->mark, args->reason, comm); }`},
	{"`printf` of saddr, daddr, sport, dport",
		`tracepoint:skb:kfree_skb { printf("%s %s %u %u\n", saddr, daddr, sport, dport) }`,
		`tracepoint:skb:kfree_skb { $s = (struct sk_buff *)args->skbaddr; $ip = (struct iphdr *)($s->head + $s->network_header); $udp = (struct udphdr *)($s->head + $s->transport_header); printf("%s %s %u %u\n", ntop($ip->saddr), ntop($ip->daddr), bswap($udp->source), bswap($udp->dest)); }`},
}

func cell(p progSize, err error) string {
	if err != nil {
		return "fails"
	}
	return fmt.Sprintf("%d (verifier %d)", p.xlated, p.verified)
}
