package codegen_test

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestAttachCookie packs the skb's place in the low byte and the reason's,
// plus one, in the next: 0 there says the function has none.
func TestAttachCookie(t *testing.T) {
	for _, c := range []struct {
		skb, reason int
		want        uint64
	}{{0, -1, 0}, {2, -1, 2}, {0, 1, 0x200}, {9, -1, 9}, {1, 2, 0x301}} {
		if got := codegen.AttachCookie(c.skb, c.reason); got != c.want {
			t.Errorf("AttachCookie(%d, %d) = %#x, want %#x", c.skb, c.reason, got, c.want)
		}
	}
}

// TestCookieProgram: on kprobe-multi and kprobes, an skb: probe for every
// place of the skb is one program that reads its attach cookie once, and
// the verifier takes it (the switch over the registers' constant offsets,
// the read past them from the stack, and `reason` read through the cookie).
func TestCookieProgram(t *testing.T) {
	text := `skb:* /dport == 9/ { print(len, reason, func) }`
	for _, c := range []struct {
		backend codegen.Backend
		arch    string
	}{{codegen.BackendKprobeMulti, ""}, {codegen.BackendKprobeMulti, "arm64"}, {codegen.BackendKprobe, ""}} {
		arch := c.arch
		out := compileWith(t, text, codegen.Options{Backend: c.backend, Arch: arch,
			SkbTargets: map[string][]codegen.SkbTarget{"*": {{SkbArg: -1, Cookie: true}}}})
		own := scriptPrograms(out)
		if len(own) != 1 {
			t.Fatalf("%s: %d programs, want 1", arch, len(own))
		}
		p := own[0]
		if !p.Cookie || p.SkbArg != -1 || p.Attach.Multi != (c.backend == codegen.BackendKprobeMulti) || !p.KprobeForm() || !strings.HasSuffix(p.Name, "_skbs") {
			t.Errorf("%s: program %s: Cookie %v SkbArg %d Multi %v", arch, p.Name, p.Cookie, p.SkbArg, p.Attach.Multi)
		}
		calls := 0
		for _, ins := range p.Prog.Instructions {
			if ins.IsBuiltinCall() && asm.BuiltinFunc(ins.Constant) == asm.FnGetAttachCookie {
				calls++
			}
		}
		if calls != 1 {
			t.Errorf("%s: bpf_get_attach_cookie called %d times, want once", arch, calls)
		}
		if arch == "" {
			load(t, out)
		}
	}
}
