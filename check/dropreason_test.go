package check_test

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// kernelLike builds a small BTF with what the tests below read of a
// kernel: struct sk_buff, kfree_skb and ip_rcv, and the tracepoints
// skb:kfree_skb and tcp:tcp_retransmit_skb with their format records. With
// reasons it is a kernel since 5.17 whose BTF names the raw tracepoints'
// arguments (__bpf_trace_CLASS functions) and has enum skb_drop_reason;
// without, one like 5.10: no drop reasons, and the raw arguments unnamed.
func kernelLike(t *testing.T, reasons bool) *btf.Spec {
	t.Helper()
	u8 := &btf.Int{Name: "unsigned char", Size: 1}
	u16 := &btf.Int{Name: "short unsigned int", Size: 2}
	u32 := &btf.Int{Name: "unsigned int", Size: 4}
	s32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	voidp := &btf.Pointer{Target: &btf.Void{}}
	skb := &btf.Struct{Name: "sk_buff", Size: 8, Members: []btf.Member{{Name: "len", Type: u32}}}
	skbp := &btf.Pointer{Target: skb}
	cskbp := &btf.Pointer{Target: &btf.Const{Type: skb}}
	sock := &btf.Struct{Name: "sock", Size: 4, Members: []btf.Member{{Name: "sk_mark", Type: u32}}}
	csockp := &btf.Pointer{Target: &btf.Const{Type: sock}}
	entry := &btf.Struct{Name: "trace_entry", Size: 8, Members: []btf.Member{
		{Name: "type", Type: u16}, {Name: "flags", Type: u8, Offset: 16},
		{Name: "preempt_count", Type: u8, Offset: 24}, {Name: "pid", Type: s32, Offset: 32},
	}}
	fn := func(name string, params ...btf.FuncParam) *btf.Func {
		return &btf.Func{Name: name, Linkage: btf.GlobalFunc, Type: &btf.FuncProto{Return: &btf.Void{}, Params: params}}
	}
	trace := func(name string, params ...btf.FuncParam) *btf.Typedef {
		unnamed := []btf.FuncParam{{Type: voidp}}
		for _, p := range params {
			unnamed = append(unnamed, btf.FuncParam{Type: p.Type})
		}
		return &btf.Typedef{Name: "btf_trace_" + name, Type: &btf.Pointer{Target: &btf.FuncProto{Return: &btf.Void{}, Params: unnamed}}}
	}
	kfreeArgs := []btf.FuncParam{{Name: "skb", Type: skbp}, {Name: "location", Type: voidp}}
	retransArgs := []btf.FuncParam{{Name: "sk", Type: csockp}, {Name: "skb", Type: cskbp}}
	kfreeRec := []btf.Member{
		{Name: "ent", Type: entry}, {Name: "skbaddr", Type: voidp, Offset: 64},
		{Name: "location", Type: voidp, Offset: 128}, {Name: "protocol", Type: u16, Offset: 192},
	}
	kfreeFn := fn("kfree_skb", btf.FuncParam{Name: "skb", Type: skbp})
	if reasons {
		enum := &btf.Enum{Name: "skb_drop_reason", Size: 4, Values: []btf.EnumValue{
			{Name: "SKB_NOT_DROPPED_YET", Value: 0}, {Name: "SKB_CONSUMED", Value: 1},
			{Name: "SKB_DROP_REASON_NOT_SPECIFIED", Value: 2}, {Name: "SKB_DROP_REASON_NO_SOCKET", Value: 3},
			{Name: "SKB_DROP_REASON_NETFILTER_DROP", Value: 8},
		}}
		kfreeArgs = append(kfreeArgs, btf.FuncParam{Name: "reason", Type: enum})
		kfreeRec = append(kfreeRec, btf.Member{Name: "reason", Type: enum, Offset: 224})
		kfreeFn = fn("sk_skb_reason_drop", btf.FuncParam{Name: "skb", Type: skbp}, btf.FuncParam{Name: "reason", Type: enum})
	}
	types := []btf.Type{
		skb, sock, kfreeFn,
		fn("ip_rcv", btf.FuncParam{Name: "skb", Type: skbp}),
		trace("kfree_skb", kfreeArgs...),
		trace("tcp_retransmit_skb", retransArgs...),
		&btf.Struct{Name: "trace_event_raw_kfree_skb", Size: 32, Members: kfreeRec},
		&btf.Struct{Name: "trace_event_raw_tcp_retransmit_skb", Size: 32, Members: []btf.Member{
			{Name: "ent", Type: entry}, {Name: "skbaddr", Type: voidp, Offset: 64},
			{Name: "skaddr", Type: voidp, Offset: 128}, {Name: "state", Type: s32, Offset: 192},
		}},
	}
	if reasons {
		types = append(types,
			fn("__bpf_trace_kfree_skb", append([]btf.FuncParam{{Name: "__data", Type: voidp}}, kfreeArgs...)...),
			fn("__bpf_trace_tcp_retransmit_skb", append([]btf.FuncParam{{Name: "__data", Type: voidp}}, retransArgs...)...),
		)
	}
	b, err := btf.NewBuilder(types, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := b.Spec()
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func checkWith(t *testing.T, spec *btf.Spec, text string) (*lang.Script, *check.Info, error) {
	t.Helper()
	script, err := lang.Parse(&lang.Source{Name: "t.st", Text: text})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	info, err := check.Check(script, check.Options{BTF: spec})
	return script, info, err
}

// identsNamed lists the identifiers of a script called name.
func identsNamed(script *lang.Script, name string) []*lang.Ident {
	var out []*lang.Ident
	for _, p := range script.Probes {
		lang.Inspect(p, func(n lang.Node) bool {
			if id, ok := n.(*lang.Ident); ok && id.Name == name {
				out = append(out, id)
			}
			return true
		})
	}
	return out
}

// TestReasonWithoutDropReasons checks `reason` on a kernel whose BTF has
// no enum skb_drop_reason: where a later kernel gives a drop reason it
// reads the constant NOT_SPECIFIED, typed with the stand-in enum, does not
// make a tracepoint read its raw arguments, and is noted once; elsewhere it
// is still an error.
func TestReasonWithoutDropReasons(t *testing.T) {
	old := kernelLike(t, false)
	for _, tc := range []struct {
		name, script string
		format       bool   // the probe reads format fields
		err          string // the error, "" for none
	}{
		{"format fields", `tracepoint:skb:kfree_skb { @r[reason] = count(); @l[args.protocol] = count(); print(reason) }`, true, ""},
		{"enum name", `tracepoint:skb:kfree_skb /reason == "NETFILTER_DROP" || reason == SKB_DROP_REASON_IP_CSUM/ { printf("%s %s\n", reason, why(reason)) }`, false, ""},
		{"skb fields", `tracepoint:skb:kfree_skb { @[reason, len] = count() }`, false, ""},
		{"category glob", `tracepoint:*:kfree_skb { @[reason] = count() }`, false, ""},
		{"fentry", `fentry:kfree_skb { @[reason, len] = count() }`, false, ""},
		{"kprobe", `kprobe:kfree_skb { @[reason] = count() }`, false, ""},
		{"fexit", `fexit:kfree_skb { @[reason] = count() }`, false, ""},
		{"glob", `fentry:kfree_sk* { @[reason] = count() }`, false, ""},
		{"skb glob", `skb:kfree_skb { @[reason] = count() }`, false, ""},
		{"not a drop", `fentry:ip_rcv { @[reason] = count() }`, false, "no drop reason in this probe"},
		{"hint", `fentry:ip_rcv { @[reason] = count() }`, false, "reason reads NOT_SPECIFIED on tracepoint:skb:kfree_skb and on kfree_skb, kfree_skb_list"},
		{"kretprobe", `kretprobe:kfree_skb { @[reason] = count() }`, false, "no drop reason in this probe"},
		{"not a 5.17 reason", `tracepoint:skb:kfree_skb /reason == "TCP_RESET"/ { exit() }`, false, `"TCP_RESET" is not a value of enum skb_drop_reason`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script, info, err := checkWith(t, old, tc.script)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Notes) != 1 || !strings.Contains(info.Notes[0], "no drop reasons") {
				t.Errorf("notes %q, want one saying there are no drop reasons", info.Notes)
			}
			if p := script.Probes[0]; (info.Probes[p].Record != nil) != tc.format {
				t.Errorf("format fields %v, want %v", info.Probes[p].Record != nil, tc.format)
			}
			for _, id := range identsNamed(script, "reason") {
				if k, ok := info.Consts[id]; !ok || k.Int != 0 {
					t.Errorf("reason at %v: const %v (%v), want 0", id.Span(), k, ok)
				}
				en, ok := info.Types[id].BTF.(*btf.Enum)
				if !ok || en.Name != "skb_drop_reason" || en.Values[0].Name != "SKB_DROP_REASON_NOT_SPECIFIED" || en.Values[0].Value != 0 {
					t.Errorf("reason at %v: type %v, want the stand-in enum skb_drop_reason", id.Span(), info.Types[id])
				}
			}
		})
	}
}

// TestReasonWithDropReasons checks that a kernel with drop reasons is read
// as before: the tracepoint's raw reason argument, no constant, no note.
func TestReasonWithDropReasons(t *testing.T) {
	script, info, err := checkWith(t, kernelLike(t, true), `tracepoint:skb:kfree_skb /reason == "NETFILTER_DROP"/ { @[reason, ksym(args.location)] = count() }`)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Notes) != 0 {
		t.Errorf("notes %q, want none", info.Notes)
	}
	p := info.Probes[script.Probes[0]]
	if p.Record != nil || p.Specs[0].ReasonParam < 0 {
		t.Errorf("format fields %v, reason parameter %d: want the raw arguments, reason among them", p.Record != nil, p.Specs[0].ReasonParam)
	}
	for _, id := range identsNamed(script, "reason") {
		if k, ok := info.Consts[id]; ok {
			t.Errorf("reason at %v is the constant %d", id.Span(), k.Int)
		}
	}
}

// TestHasPrunesArgMode checks that only the branch has() keeps decides
// whether a tracepoint reads its raw arguments or its format fields: the
// branch dropped may read the other kind, and the probe is not rejected
// for reading both.
func TestHasPrunesArgMode(t *testing.T) {
	const script = `tracepoint:tcp:tcp_retransmit_skb {
	if (has(args.sk)) {
		@[args.sk, len] = count();
	} else {
		@[args.skaddr] = count();
	}
	if (!has(args.sk)) {
		@n[args.state] = count();
	}
}
tracepoint:tcp:tcp_retransmit_skb {
	if (has(args.sk)) {
		$sk = args.sk;
	} else {
		$sk = arg0;
	}
	@m[$sk->sk_mark] = count();
}`
	for _, tc := range []struct {
		name    string
		reasons bool
		format  []bool // per probe
	}{
		{"names raw arguments", true, []bool{false, false}},
		// 5.10's BTF leaves them unnamed: skbtrace's table of the packet
		// tracepoints names them, as a later kernel's BTF does.
		{"raw arguments named by the table", false, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, info, err := checkWith(t, kernelLike(t, tc.reasons), script)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range s.Probes {
				if got := info.Probes[p].Record != nil; got != tc.format[i] {
					t.Errorf("probe %d reads format fields: %v, want %v", i, got, tc.format[i])
				}
			}
		})
	}
}

// TestTracepointArgsTable checks that on a kernel whose BTF leaves the raw
// tracepoint arguments unnamed (5.10), the packet tracepoints' arguments
// have their TP_PROTO names: SPEC.md's bare `ksym(location)` on
// tracepoint:skb:kfree_skb reads the raw argument 1, and has(args.skb) is
// true; a name the tracepoint does not have is still an error.
func TestTracepointArgsTable(t *testing.T) {
	old := kernelLike(t, false)
	script, info, err := checkWith(t, old, `tracepoint:skb:kfree_skb { if (has(args.skb)) { print(reason, ksym(location)) } }`)
	if err != nil {
		t.Fatal(err)
	}
	p := script.Probes[0]
	if info.Probes[p].Record != nil {
		t.Errorf("the probe reads format fields, want the raw arguments")
	}
	ids := identsNamed(script, "location")
	if len(ids) != 1 {
		t.Fatalf("%d identifiers location, want 1", len(ids))
	}
	if i, ok := info.ArgRefs[ids[0]]; !ok || info.Probes[p].Specs[0].Params[i].Index != 1 {
		t.Errorf("location refers to argument %v (%v), want the raw argument 1", i, ok)
	}
	if _, _, err := checkWith(t, old, `tracepoint:skb:kfree_skb { print(ksym(locaton)) }`); err == nil || !strings.Contains(err.Error(), "locaton") {
		t.Errorf("an unknown name: error %v, want one naming it", err)
	}
}
