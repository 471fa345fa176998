package codegen_test

import (
	"errors"
	"net"
	"os"
	"strconv"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestOverheadGatesLoad compiles skb, tracepoint and kprobe-form probes
// with --sample and --max-rate's gates and puts every program, the unsample
// helpers included, through the verifier; without the options the
// programs have neither the gates nor their maps.
func TestOverheadGatesLoad(t *testing.T) {
	scripts := []string{
		`skb:ip_rcv /len > 10/ { @[dev] = count() }`,
		`tracepoint:skb:kfree_skb { print(len, reason) }`,
		`skb:* { print(len) } interval:s:1 { print(@x) } BEGIN { @x = 1 }`,
		`skb:ip_rcv { track() } skb:* { printf("%d\n", len) }`,
	}
	for _, text := range scripts {
		plain := compile(t, text)
		for _, name := range []string{codegen.SampleMap, codegen.SampleRateMap, codegen.OverheadMap} {
			if plain.Maps[name] != nil {
				t.Errorf("%s: map %s without --sample or --max-rate", text, name)
			}
		}
		gated := compileWith(t, text, codegen.Options{Sample: 4, MaxRate: 100})
		for _, name := range []string{codegen.SampleMap, codegen.SampleRateMap, codegen.OverheadMap} {
			if gated.Maps[name] == nil {
				t.Errorf("%s: no map %s with --sample and --max-rate", text, name)
			}
		}
		helpers := 0
		for i, p := range gated.Programs {
			if p.Helper == codegen.HelperUnsample || p.Helper == codegen.HelperUnsampleFree {
				helpers++
				continue
			}
			if p.Helper != "" {
				continue
			}
			if grow := len(p.Prog.Instructions) - len(plain.Programs[i].Prog.Instructions); codegen.OnEvents(p.Spec.Spec.Kind) && grow <= 0 {
				t.Errorf("%s: program %s did not grow with the gates", text, p.Name)
			} else if !codegen.OnEvents(p.Spec.Spec.Kind) && grow != 0 {
				t.Errorf("%s: program %s (%s) grew by %d: only programs on events are gated", text, p.Name, p.Spec.Spec.Kind, grow)
			}
		}
		if helpers != 4 {
			t.Errorf("%s: %d unsample helpers, want 4 (fexit on kfree_skbmem and napi_skb_cache_put, tp_btf on kfree_skb and consume_skb)", text, helpers)
		}
		// fexit programs, which some kernels refuse (this one), load apart.
		var progs []*codegen.Program
		for _, p := range gated.Programs {
			switch p.Helper {
			case codegen.HelperUnsample:
				loadFexit(t, gated, p)
			case codegen.HelperFollow, codegen.HelperEdge, codegen.HelperForget:
			default:
				progs = append(progs, p)
			}
		}
		gated.Programs = progs
		load(t, gated)
	}
}

// TestRateGateCaps attaches `tracepoint:skb:kfree_skb` compiled with
// --max-rate 10 and drops 200 UDP datagrams on loopback at once: at most
// ten a CPU are counted in the script's map, and what was counted plus
// what the gate capped is every datagram sent.
func TestRateGateCaps(t *testing.T) {
	const sent, rate = 200, 10
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dport := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	out := compileWith(t, `tracepoint:skb:kfree_skb /reason == "NO_SOCKET" && dport == `+strconv.Itoa(dport)+`/ { @ = count() }`, codegen.Options{MaxRate: rate})
	coll := load(t, out)
	l, err := link.AttachTracing(link.TracingOptions{Program: coll.Programs[out.Programs[0].Name], AttachType: ebpf.AttachTraceRawTp})
	if err != nil {
		t.Fatalf("attach tp_btf: %v", err)
	}
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: dport}
	for i := 0; i < sent; i++ {
		if _, err := conn.WriteTo([]byte("x"), dst); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	l.Close()
	var counted, key uint64
	var perCPU []uint64
	it := coll.Maps[codegen.MapName("")].Iterate()
	for it.Next(&key, &perCPU) {
		for _, v := range perCPU {
			counted += v
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("read @: %v", err)
	}
	var ov []codegen.OverheadValue
	if err := coll.Maps[codegen.OverheadMap].Lookup(uint32(0), &ov); err != nil {
		t.Fatalf("read the overhead map: %v", err)
	}
	var capped, busy uint64
	for _, v := range ov {
		capped += v.CappedEvents
		if v.RateCount > 0 {
			busy++
		}
	}
	// Two windows at most per CPU, if the sends straddled a second.
	if counted < rate || counted > 2*rate*busy {
		t.Errorf("counted %d events on %d CPUs at --max-rate %d", counted, busy, rate)
	}
	if counted+capped != sent {
		t.Errorf("counted %d + capped %d = %d, want the %d sent", counted, capped, counted+capped, sent)
	}
}

// loadFexit loads one fexit program of out, or logs that the kernel
// refuses fexit programs.
func loadFexit(t *testing.T, out *codegen.Output, p *codegen.Program) {
	t.Helper()
	coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: out.Maps, Programs: map[string]*ebpf.ProgramSpec{p.Name: p.Prog}})
	switch {
	case err == nil:
		coll.Close()
	case errors.Is(err, os.ErrPermission):
		t.Logf("%s: this kernel refuses fexit programs: not loaded", p.Name)
	default:
		t.Errorf("load %s: %v", p.Name, err)
	}
}
