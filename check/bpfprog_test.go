package check_test

import (
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// loadedProgs stands for the kernel's list of loaded packet programs.
func loadedProgs() ([]check.BPFProg, error) {
	return []check.BPFProg{
		{ID: 7, Name: "drop9", Type: "tc", Func: "drop9"},
		{ID: 8, Name: "drop9", Type: "tc", Func: "drop9"},
		{ID: 9, Name: "xdrop9", Type: "xdp", Func: "xdrop9"},
		{ID: 10, Name: "egress_f", Type: "cgroup_skb", Func: "egress_f"},
		{ID: 11, Name: "nobtf", Type: "tc"},
	}, nil
}

// TestBpfProgTargets checks that a bpf: spec stands for every loaded
// program of its type its glob (or id) matches, each with its context as
// argument 0 (the skb of tc and cgroup_skb programs, XDP's xdp_buff), and
// that bpfret:'s retval is the verdict's enum. In XDP, pcap() and pkt
// read the frame.
func TestBpfProgTargets(t *testing.T) {
	for _, tc := range []struct {
		text   string
		ids    []uint32
		skb    bool
		retval string
	}{
		{"bpf:tc:drop* { print(len, dev, prog, prog_id) }", []uint32{7, 8}, true, "invalid"},
		{"bpf:tc:8 { print(args.skb->len) }", []uint32{8}, true, "invalid"},
		{"bpfret:tc:drop9 { print(retval, len) }", []uint32{7, 8}, true, "enum tc_action"},
		{"bpfret:xdp:* { print(retval, args.xdp->data, len, dev, ifindex) }", []uint32{9}, false, "enum xdp_action"},
		{"fexit:bpf:egress_f { print(retval, saddr) }", []uint32{10}, true, "enum sk_action"},
		{"bpfret:*:*drop9 { print(retval) }", []uint32{7, 8, 9}, false, "s32"},
		{`bpfret:xdp:xdrop9 /pcap("udp dst port 9 or vxlan and tcp")/ { print(retval, pkt) }`, []uint32{9}, false, "enum xdp_action"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			script, info := compiletest.Check(t, tc.text, check.Options{BPFProgs: loadedProgs})
			pi := info.Probes[script.Probes[0]]
			var ids []uint32
			for _, psi := range pi.Specs[0].Progs {
				ids = append(ids, psi.Prog.ID)
				if psi.Func != psi.Prog.Func {
					t.Errorf("program %d attaches to %q, want its function %q", psi.Prog.ID, psi.Func, psi.Prog.Func)
				}
			}
			if len(ids) != len(tc.ids) || !equalIDs(ids, tc.ids) {
				t.Errorf("programs %v, want %v", ids, tc.ids)
			}
			if pi.Skb != tc.skb || !pi.Prog {
				t.Errorf("skb %v prog %v, want skb %v and prog", pi.Skb, pi.Prog, tc.skb)
			}
			if got := retvalName(pi.Retval); got != tc.retval {
				t.Errorf("retval %s, want %s", got, tc.retval)
			}
		})
	}
}

func retvalName(t types.Type) string {
	if t.Kind == types.Invalid {
		return "invalid"
	}
	return t.String()
}

func equalIDs(a, b []uint32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBpfProgErrors checks the positioned errors of bpf: probes: nothing
// loaded matches, a match without BTF, an skb field XDP has not (len,
// dev and ifindex it has, not in a list with tc), prog outside.
func TestBpfProgErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"bpf:tc:nothing* { exit() }", "1:1: bpf:tc:nothing* matches no loaded tc program"},
		{"bpf:tc:nobtf { exit() }", `1:1: bpf:tc:nobtf matches nobtf (id 11), loaded without BTF`},
		{"bpf:xdp:xdrop9 { print(saddr) }", "1:24: saddr needs an skb, and this probe has none"},
		{"bpf:xdp:xdrop9 { print(daddr) }", "an XDP program sees a frame before the kernel makes an skb of it: len, dev, ifindex, pkt and pcap() read it"},
		{"bpf:xdp:xdrop9 { capture() }", "1:18: capture() needs an skb, and this probe has none"},
		{`bpf:xdp:xdrop9 /pcap("inbound")/ { exit() }`, "pkt_type needs an skb, and this probe has none"},
		{"bpf:tc:drop9, bpf:xdp:xdrop9 { print(len) }", "1:38: len needs an skb, and this probe has none"},
		{"bpf:xdp:xdrop9 { print(retval) }", "no return value in this probe"},
		{"skb:ip_rcv { print(prog) }", "1:20: no BPF program traced in this probe"},
	} {
		script, err := lang.Parse(&lang.Source{Name: "b.st", Text: tc.text})
		if err != nil {
			t.Fatal(err)
		}
		_, err = check.Check(script, check.Options{BTF: kernelBTF(t), BPFProgs: loadedProgs})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.text, err, tc.want)
		}
	}
}

// TestBpfProgLate checks bpf: specs that match nothing loaded under
// missing_probes = ignore: no error; they wait for programs of their type
// (LateType), checked in its context (a tc one's skb, its verdict's
// enum); check.LateSpec takes a program loaded later that the spec
// matches, of that type, with BTF, and no other.
func TestBpfProgLate(t *testing.T) {
	script, info := compiletest.Check(t, `config = { missing_probes = "ignore" }
bpfret:tc:late* { print(retval, len, dport) }
bpf:*:late* { print(prog) }`, check.Options{BPFProgs: loadedProgs})
	tc, any := info.Probes[script.Probes[0]], info.Probes[script.Probes[1]]
	if si := tc.Specs[0]; si.LateType != "tc" || len(si.Progs) != 0 || !tc.Skb || retvalName(tc.Retval) != "enum tc_action" {
		t.Errorf("bpfret:tc:late*: late type %q, %d programs, skb %v, retval %s", si.LateType, len(si.Progs), tc.Skb, retvalName(tc.Retval))
	}
	if si := any.Specs[0]; si.LateType != "*" || any.Skb {
		t.Errorf("bpf:*:late*: late type %q, skb %v", si.LateType, any.Skb)
	}
	for _, c := range []struct {
		spec *check.SpecInfo
		prog check.BPFProg
		want bool
	}{
		{tc.Specs[0], check.BPFProg{ID: 20, Name: "late_tc", Type: "tc", Func: "late_tc"}, true},
		{tc.Specs[0], check.BPFProg{ID: 21, Name: "late_x", Type: "xdp", Func: "late_x"}, false},
		{tc.Specs[0], check.BPFProg{ID: 22, Name: "other", Type: "tc", Func: "other"}, false},
		{tc.Specs[0], check.BPFProg{ID: 23, Name: "late_nobtf", Type: "tc"}, false},
		{any.Specs[0], check.BPFProg{ID: 21, Name: "late_x", Type: "xdp", Func: "late_x"}, true},
	} {
		psi := check.LateSpec(c.spec, &c.prog)
		if (psi != nil) != c.want {
			t.Errorf("%s takes %+v: %v, want %v", c.spec.Spec.Text, c.prog, psi != nil, c.want)
			continue
		}
		if psi != nil && (psi.Func != c.prog.Func || psi.Prog.ID != c.prog.ID || len(psi.Params) != 1) {
			t.Errorf("%s on %+v: func %q, %d params", c.spec.Spec.Text, c.prog, psi.Func, len(psi.Params))
		}
	}
}
