package codegen_test

import (
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestSkbRetKprobeForm loads skbret: programs as the kprobe and
// kprobe-multi backends attach them: a return program per return class,
// each sign- or zero-extending the return register as its functions
// return, and entry programs per skb position; the skb fields, retval
// and duration all read.
func TestSkbRetKprobeForm(t *testing.T) {
	classes := []codegen.RetClass{{}, {Size: 8, Ptr: true}, {Size: 4, Signed: true}, {Size: 4}, {Size: 1}, {Size: 2, Signed: true}}
	var rets []codegen.SkbTarget
	for _, rc := range classes {
		rets = append(rets, codegen.SkbTarget{SkbArg: -1, Return: true, Ret: rc})
	}
	opts := codegen.Options{
		SkbTargets:   map[string][]codegen.SkbTarget{},
		RetTargets:   map[string][]codegen.SkbTarget{"ip_*": rets, "nf_hook_slow": {{SkbArg: -1, Return: true, Ret: codegen.RetClass{Size: 4, Signed: true}}}},
		EntryTargets: []codegen.SkbTarget{{SkbArg: 0}, {SkbArg: 1}, {SkbArg: 6}},
	}
	out := compileWith(t, `skbret:ip_* /retval != 0 && len > 0/ { print(retval, duration, dev, saddr, dport); @[func] = hist(duration) }
skbret:nf_hook_slow /retval < 0/ { @drops[func, retval] = count() }`, opts)
	var ret, entry int
	for _, p := range out.Programs {
		switch {
		case p.Helper == codegen.HelperEntry:
			entry++
			if !p.KprobeForm() || p.Prog.Type != ebpf.Kprobe {
				t.Errorf("%s: entry program not in the kprobe form", p.Name)
			}
		case p.Return:
			ret++
			if !p.KprobeForm() || p.SkbArg != -1 {
				t.Errorf("%s: return program not in the kprobe form, or reads an argument (SkbArg %d)", p.Name, p.SkbArg)
			}
		}
	}
	if ret != len(classes)+1 || entry != 3 {
		t.Fatalf("%d return and %d entry programs, want %d and 3", ret, entry, len(classes)+1)
	}
	if _, ok := out.Maps[codegen.EntryMap]; !ok {
		t.Fatalf("no %s map", codegen.EntryMap)
	}
	load(t, out)
}

// TestSkbRetDefault is what -d compiles without a backend: one return
// program, entry programs for the first skb positions; they load.
func TestSkbRetDefault(t *testing.T) {
	out := compile(t, `skbret:ip_rcv_core { print(retval, skb, duration, len); @ok = count() }`)
	var ret, entry int
	for _, p := range out.Programs {
		if p.Helper == codegen.HelperEntry {
			entry++
		}
		if p.Return {
			ret++
		}
	}
	if ret != 1 || entry != codegen.SkbArgs {
		t.Fatalf("%d return and %d entry programs, want 1 and %d", ret, entry, codegen.SkbArgs)
	}
	load(t, out)
}

// TestSkbRetFexit compiles the fentry backend's form: an fexit program per
// function, the return value after its NArgs arguments, and an fentry
// entry program per function. This kernel may refuse fentry/fexit: where
// it does, the programs are only compiled.
func TestSkbRetFexit(t *testing.T) {
	opts := codegen.Options{
		RetTargets:   map[string][]codegen.SkbTarget{"ip_rcv_core": {{Name: "ip_rcv_core", Fentry: true, SkbArg: 0, NArgs: 2, Return: true, Ret: codegen.RetClass{Size: 8, Ptr: true}}}},
		EntryTargets: []codegen.SkbTarget{{Name: "ip_rcv_core", Fentry: true, SkbArg: 0}},
	}
	out := compileWith(t, `skbret:ip_rcv_core { print(retval, skb, duration, len) }`, opts)
	var fexit, fentry int
	for _, p := range out.Programs {
		switch {
		case p.Prog.AttachType == ebpf.AttachTraceFExit && p.Function == "ip_rcv_core":
			fexit++
		case p.Prog.AttachType == ebpf.AttachTraceFEntry && p.Helper == codegen.HelperEntry && p.Function == "ip_rcv_core":
			fentry++
		}
	}
	if fexit != 1 || fentry != 1 {
		t.Fatalf("%d fexit and %d fentry entry programs, want 1 and 1", fexit, fentry)
	}
}
