package codegen_test

import (
	"errors"
	"os"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
)

// suite is the load suite: scripts covering every construct the language
// has, each compiled and put through the running kernel's verifier.
var suite = []string{
	// Probes and contexts.
	`tracepoint:skb:kfree_skb { @[reason] = count() }`,
	`tracepoint:net:netif_receive_skb { @[ifindex] = count() }`,
	`tracepoint:net:net_dev_xmit { @[dev, args.rc] = count() }`,
	`tracepoint:tcp:tcp_retransmit_skb { @[tcp_state(args.sk->__sk_common.skc_state)] = count() }`,
	`tracepoint:skb:consume_skb { @n = count() }`,
	`kprobe:tcp_v4_rcv { @[len, args.skb->protocol] = count() }`,
	`kprobe:ip_rcv { @[arg0 != 0] = count() }`,
	`kretprobe:tcp_v4_rcv { @[retval] = count() }`,
	`kretprobe:ip_rcv { print(retval) }`,
	`kretprobe:skb_clone { print(retval) }`,
	`skb:* { @[func] = count() }`,
	`skb:ip_rcv*, skb:tcp_v4_rcv /proto == tcp && dport == 80/ { @calls[sport, tcpflags] = count() }`,
	`BEGIN { printf("start\n") } END { printf("end\n") }`,
	`interval:ms:100 { print(@n); clear(@n) } tracepoint:skb:kfree_skb { @n = count() }`,
	`interval:s:1 { zero(@m) } tracepoint:skb:kfree_skb { @m = sum(len) }`,
	// skb fields.
	`tracepoint:skb:kfree_skb /len > 10 && mark == 0/ { @bytes[ifindex] = sum(len) }`,
	`tracepoint:skb:kfree_skb { @t[pkt_type, netns, proto] = count() }`,
	`tracepoint:skb:kfree_skb { @[hash, priority] = count() }`,
	`tracepoint:skb:kfree_skb { @[tcpstate] = count() }`,
	`tracepoint:skb:kfree_skb { @x[skb->sk->__sk_common.skc_family, skb->dev->mtu] = count() }`,
	`tracepoint:skb:kfree_skb { @[skb->pkt_type, skb->ip_summed, skb->cloned] = count() }`,
	`tracepoint:skb:kfree_skb { @[skb->dev->name] = count() }`,
	`tracepoint:skb:kfree_skb { @[skb->cb[0], skb->cb[47]] = count() }`,
	`tracepoint:skb:kfree_skb { $i = len & 7; @[skb->head[$i]] = count() }`,
	`tracepoint:skb:kfree_skb { @[skb->sk->__sk_common.skc_v6_daddr.in6_u.u6_addr8[15]] = count() }`,
	`tracepoint:skb:kfree_skb { @[args.location, args.rx_sk != 0] = count() }`,
	// Header fields.
	`skb:* /l4proto == udp || l4proto == icmp/ { @[l4proto, dport, mark, hash] = sum(len) }`,
	`tracepoint:skb:kfree_skb /(tcpflags & SYN) != 0/ { @syn[dport] = count() }`,
	`tracepoint:skb:kfree_skb { @[sport, dport, tcpflags, l4proto] = count() }`,
	`tracepoint:skb:kfree_skb /saddr in 10.0.0.0/8 || daddr == ::1 || saddr != 192.168.1.1 || daddr in fe80::/10/ { @[dport] = count() }`,
	`tracepoint:skb:kfree_skb /saddr == daddr/ { @self = count() }`,
	// Addresses and strings as keys, values and variables.
	`tracepoint:skb:kfree_skb { @[saddr, daddr] = count() }`,
	`tracepoint:skb:kfree_skb { @[saddr, sport, daddr, dport, l4proto] = sum(len) }`,
	`tracepoint:skb:kfree_skb { @[comm, dev] = count() }`,
	`tracepoint:skb:kfree_skb { @last[pid] = comm; @from[dport] = saddr }`,
	`tracepoint:skb:kfree_skb { $a = saddr; $c = comm; @[$a, $c] = count(); print($a, $c) }`,
	`tracepoint:skb:kfree_skb { $d = len > 100 ? "big" : "small"; @[$d] = count() }`,
	`tracepoint:skb:kfree_skb /comm == "ping" || dev != "lo"/ { @n = count() }`,
	`tracepoint:skb:kfree_skb { @seen[daddr] = 1 } tracepoint:net:net_dev_xmit { if (@seen[daddr] == 1) { @hit = count() } }`,
	`tracepoint:tcp:tcp_retransmit_skb { $sk = args.sk; @[ntop($sk->__sk_common.skc_rcv_saddr), ntop(2, $sk->__sk_common.skc_daddr)] = count(); @six[ntop($sk->__sk_common.skc_v6_daddr)] = count() }`,
	`tracepoint:skb:kfree_skb { @[str(skb->dev->name), str(skb->dev->name, 4)] = count() }`,
	`tracepoint:skb:kfree_skb { @[ntop(saddr)] = count() }`,
	// kstack.
	`tracepoint:skb:kfree_skb { @[kstack] = count() }`,
	`tracepoint:skb:kfree_skb { print(kstack); $s = kstack; @by[reason, $s] = count() }`,
	`kprobe:tcp_v4_rcv { @[kstack] = count() }`,
	`tracepoint:skb:kfree_skb /reason == "NO_SOCKET"/ { @[kstack] = count() }`,
	// Scalars, operators, variables, control flow.
	`tracepoint:skb:kfree_skb /reason == "NO_SOCKET" || !(len < 3)/ { $a = len * 2 + 1; $a += 3; @v[cpu, pid, tid] = $a }`,
	`tracepoint:skb:kfree_skb { @deep = ((((len + 1) * (len + 2)) - ((len + 3) * (len + 4))) ^ (((len + 5) << 1) | ((len + 6) >> 2))) + (len > 7 ? len & 8 : ~len) }`,
	`tracepoint:skb:kfree_skb { if (len > 100) { @big = count() } else if (len > 10) { @mid = count() } else { @small = count() } @n++; @m -= 2 }`,
	`tracepoint:skb:kfree_skb { $s = 0 - len; @q = $s / 3; @r = $s % 7; $s /= 2; @t = $s }`,
	`tracepoint:skb:kfree_skb { @x *= 3; @y |= len; @z <<= 1; @w /= 2 }`,
	`tracepoint:skb:kfree_skb { $x = 1; $x <<= 4; $x |= len; $x ^= 0xff; $x &= 0xffff; @[$x] = count() }`,
	`tracepoint:skb:kfree_skb { @[-len, +len, !len, ~len] = count() }`,
	`tracepoint:skb:kfree_skb { @[nsecs / 1000000000, elapsed > 1000] = count() }`,
	`tracepoint:skb:kfree_skb { @[len >= 10, len <= 20, len != 3, len == 4] = count() }`,
	`tracepoint:skb:kfree_skb { $d = ((len + 1) * ((len + 2) * ((len + 3) * ((len + 4) * ((len + 5) * (len + 6)))))); @d = $d }`,
	// Maps and aggregations.
	`tracepoint:skb:kfree_skb { @h[ifindex] = hist(len); @l = lhist(len, -100, 1500, 100); @mn[cpu] = min(len); @mx = max(len); @a = avg(len); @s[l4proto, dport] = stats(len) }`,
	`tracepoint:skb:kfree_skb { @c[reason] = count(); if (@c[reason] > 100) { @many = 1 } }`,
	`tracepoint:skb:kfree_skb { @mx[cpu] = max(len); @mn[cpu] = min(len); @d = @mx[cpu] - @mn[cpu] }`,
	`tracepoint:skb:kfree_skb { @s = sum(len); @total = @s }`,
	`tracepoint:skb:kfree_skb { @start[skb] = nsecs } tracepoint:skb:consume_skb { if (@start[skb] != 0) { @lat = hist(nsecs - @start[skb]); delete(@start[skb]) } }`,
	`tracepoint:skb:kfree_skb { @[1, 2, 3, 4, 5, 6, 7, 8] = count() }`,
	`tracepoint:skb:kfree_skb { @ = count(); @a[dport] = lhist(len, 0, 100, 10); @b[comm] = hist(len) }`,
	// Output.
	`tracepoint:skb:kfree_skb { printf("%s %d %s:%u -> %s:%u %s %s\n", reason, len, saddr, sport, daddr, dport, dev, comm); print(len, saddr, daddr, l4proto) }`,
	`tracepoint:skb:kfree_skb { printf("%-16s %5d %x %p %c\n", comm, pid, mark, skb, 65) }`,
	`tracepoint:skb:kfree_skb { printf("%s %s\n", ksym(args.location), hex(len)) } skb:ip_rcv { print(func) }`,
	`skb:* /mark == 0xdeadbeef/ < print(len, dev) >`,
	`tracepoint:skb:kfree_skb { print(elapsed, nsecs, cpu, comm, kstack, tcpstate) }`,
	`BEGIN { printf("start\n") } interval:ms:100 { print(@n); clear(@n); zero(@m) } tracepoint:skb:kfree_skb { @n = count(); @m = sum(len); if (len > 1000) { exit() } } END { printf("end\n") }`,
	// track().
	`skb:* /mark == 0xdeadbeef/ { track(); print(len, dev) }`,
	`tracepoint:net:netif_receive_skb /dport == 53/ { track() } tracepoint:skb:kfree_skb /len > 0/ { print(reason) }`,
	// fentry and fexit: this kernel refuses them; their structure is checked.
	`fentry:tcp_v4_rcv { @[len, args.skb->len] = count() }`,
	`fexit:tcp_v4_rcv { @[retval] = count() }`,
	// Globs on function probes.
	`kprobe:ip_rcv* { @[func, len, dport] = count() }`,
	`kretprobe:tcp_v4_* { @[func, retval] = count() }`,
	`fexit:ip_rcv* { @[func, retval, len] = count() }`,
}

// TestVerifierAcceptsScripts compiles every script of the suite and loads
// each program into the running kernel.
func TestVerifierAcceptsScripts(t *testing.T) {
	if len(suite) < 60 {
		t.Fatalf("the suite has %d scripts; it must cover every construct with at least 60", len(suite))
	}
	for _, s := range suite {
		t.Run(s, func(t *testing.T) {
			out := compile(t, s)
			for _, p := range out.Programs {
				one := &ebpf.CollectionSpec{Maps: out.Maps, Programs: map[string]*ebpf.ProgramSpec{p.Name: p.Prog}}
				coll, err := ebpf.NewCollection(one)
				if errors.Is(err, os.ErrPermission) && isTracing(p.Prog) {
					// fentry/fexit: refused by this kernel even to root.
					checkStructure(t, p.Prog)
					continue
				}
				if err != nil {
					var ve *ebpf.VerifierError
					if errors.As(err, &ve) {
						t.Fatalf("%s: verifier rejected the program: %+v", p.Name, ve)
					}
					t.Fatalf("%s: load: %v", p.Name, err)
				}
				info, err := coll.Programs[p.Name].Info()
				if err != nil {
					t.Fatal(err)
				}
				n, _ := info.VerifiedInstructions()
				t.Logf("%s: %d instructions, %d verified", p.Name, len(p.Prog.Instructions), n)
				coll.Close()
			}
		})
	}
}

func isTracing(p *ebpf.ProgramSpec) bool {
	return p.AttachType == ebpf.AttachTraceFEntry || p.AttachType == ebpf.AttachTraceFExit
}

// checkStructure checks what can be checked of a program the kernel will
// not load: it names its target and its instructions encode.
func checkStructure(t *testing.T, p *ebpf.ProgramSpec) {
	t.Helper()
	if p.Type != ebpf.Tracing || p.AttachTo == "" {
		t.Errorf("%s: type %v attach %q; want a Tracing program with a target", p.Name, p.Type, p.AttachTo)
	}
	if err := p.Instructions.Marshal(discard{}, nativeEndian); err != nil {
		t.Errorf("%s: instructions do not encode: %v", p.Name, err)
	}
	t.Logf("%s: fentry/fexit refused by this kernel; structure checked (%d instructions)", p.Name, len(p.Instructions))
}

// TestSkbProgramForms checks the programs skb: probes compile to for each
// backend: kprobe form (one per skb position, which loads here, also as a
// kprobe-multi program), and fentry (one per function, typed arguments).
func TestSkbProgramForms(t *testing.T) {
	const text = `skb:ip_rcv* /len > 0/ { @[func, dev] = count(); print(len, reason) }`
	kp := compileWith(t, text, codegen.Options{SkbTargets: map[string][]codegen.SkbTarget{"ip_rcv*": {
		{SkbArg: 0}, {SkbArg: 2}, {SkbArg: 1, HasReason: true, ReasonArg: 2},
		// Past the sixth argument, the skb and reason are on the stack.
		{SkbArg: 5}, {SkbArg: 8, HasReason: true, ReasonArg: 6},
	}}})
	if len(kp.Programs) != 5 || kp.Programs[0].SkbArg != 0 || kp.Programs[1].SkbArg != 2 || kp.Programs[2].SkbArg != 1 || kp.Programs[4].SkbArg != 8 {
		t.Fatalf("kprobe form: %d programs", len(kp.Programs))
	}
	if p := kp.Programs[2]; !p.KprobeForm() || !p.HasReason || p.ReasonArg != 2 || kp.Programs[0].HasReason {
		t.Errorf("kprobe form: reasons %v %v %v", kp.Programs[0].HasReason, p.HasReason, p.ReasonArg)
	}
	for _, multi := range []bool{false, true} {
		for _, p := range kp.Programs {
			ps := p.Prog.Copy()
			if multi {
				ps.AttachType = ebpf.AttachTraceKprobeMulti
			}
			coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: kp.Maps, Programs: map[string]*ebpf.ProgramSpec{p.Name: ps}})
			if err != nil {
				t.Fatalf("%s (multi %v): %v", p.Name, multi, err)
			}
			coll.Close()
		}
	}
	fe := compileWith(t, text, codegen.Options{SkbTargets: map[string][]codegen.SkbTarget{"ip_rcv*": {
		{Name: "ip_rcv", Fentry: true, SkbArg: 0}, {Name: "ip_rcv_finish", Fentry: true, SkbArg: 2},
	}}})
	if len(fe.Programs) != 2 {
		t.Fatalf("fentry form: %d programs", len(fe.Programs))
	}
	for i, want := range []string{"ip_rcv", "ip_rcv_finish"} {
		p := fe.Programs[i]
		if p.Function != want || p.Prog.AttachTo != want || p.Prog.AttachType != ebpf.AttachTraceFEntry {
			t.Errorf("program %d: function %q attach %q %v", i, p.Function, p.Prog.AttachTo, p.Prog.AttachType)
		}
		coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: fe.Maps, Programs: map[string]*ebpf.ProgramSpec{p.Name: p.Prog}})
		if errors.Is(err, os.ErrPermission) {
			checkStructure(t, p.Prog)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		coll.Close()
	}
}
