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
		ps := progSize{name: info.Name}
		if n, err := info.TranslatedSize(); err == nil {
			ps.xlated = n / 8
		}
		ps.verified, _ = info.VerifiedInstructions()
		out = append(out, ps)
	}
}

// attachedSize runs a tool on a script until it says it has attached
// (skbtrace's "tracing", bpftrace's "Attaching") and a program it loaded
// is there, reads the size of the largest, and stops the tool.
func attachedSize(tool string, args ...string) (progSize, error) {
	before := lastProgID()
	cmd := exec.Command(tool, append(args, "-c", "/bin/sleep 10")...)
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return progSize{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		<-exited
	}()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			return progSize{}, fmt.Errorf("%s %v ended before attaching: %v: %s", tool, args, err, out.String())
		case <-deadline:
			return progSize{}, fmt.Errorf("%s %v: not attached within 20 s", tool, args)
		case <-time.After(20 * time.Millisecond):
		}
		if o := out.String(); !strings.Contains(o, "tracing ") && !strings.Contains(o, "Attaching ") {
			continue
		}
		var best progSize
		for _, p := range progsAfter(before) {
			if p.xlated > best.xlated {
				best = p
			}
		}
		if best.xlated == 0 {
			// bpftrace says it attaches before it loads: wait for the program.
			continue
		}
		return best, nil
	}
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
