package codegen_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestAttachDescriptors checks where each kind of probe's program says it
// attaches: what the runtime attaches by.
func TestAttachDescriptors(t *testing.T) {
	out := compile(t, `BEGIN { @b = count() }
END { @e = count() }
interval:ms:250 { @i = count() }
profile:hz:99 { @p = count() }
tracepoint:skb:kfree_skb { @t = count() }
kprobe:ip_rcv { @k = count() }
kprobe:ip_rcv+4 { @ko = count() }
kretprobe:ip_rcv { @kr = count() }
fentry:ip_rcv { @f = count() }
fexit:ip_rcv { @fx = count() }
skb:ip_rcv_core { @s = count() }
kprobe:ip_rcv_* { @g = count() }`)
	want := map[string]string{
		"BEGIN":                    "kind BEGIN func  ret false period 0 hz 0",
		"END":                      "kind END func  ret false period 0 hz 0",
		"interval:ms:250":          fmt.Sprintf("kind interval func  ret false period %d hz 0", 250*time.Millisecond),
		"profile:hz:99":            "kind profile func  ret false period 0 hz 99",
		"tracepoint:skb:kfree_skb": "kind tp_btf func  ret false period 0 hz 0",
		"kprobe:ip_rcv":            "kind kprobe func ip_rcv ret false period 0 hz 0",
		"kprobe:ip_rcv+4":          "kind kprobe func ip_rcv ret false period 0 hz 0 offset 4",
		"kretprobe:ip_rcv":         "kind kprobe func ip_rcv ret true period 0 hz 0",
		"fentry:ip_rcv":            "kind fentry func ip_rcv ret false period 0 hz 0",
		"fexit:ip_rcv":             "kind fexit func ip_rcv ret false period 0 hz 0",
	}
	desc := func(a codegen.Attach) string {
		d := fmt.Sprintf("kind %v func %s ret %v period %d hz %d", a.Kind, a.Func, a.Return, a.Period, a.Hz)
		if a.Offset > 0 {
			d += fmt.Sprintf(" offset %d", a.Offset)
		}
		return d
	}
	skb, glob := 0, 0
	for _, p := range out.Programs {
		a := p.Attach
		switch a.Text {
		case "skb:ip_rcv_core":
			skb++
			if a.Kind != codegen.AttachSkbFuncs || a.Glob != "ip_rcv_core" || a.Multi || a.ProbeKind != "skb" {
				t.Errorf("%s: %+v, want the kprobe form of skb:ip_rcv_core", p.Name, a)
			}
		case "kprobe:ip_rcv_*":
			glob++
			if a.Kind != codegen.AttachKprobes || len(a.Funcs) == 0 || a.Multi || a.Return {
				t.Errorf("%s: %+v, want a kprobe glob's functions", p.Name, a)
			}
		default:
			if got := desc(a); got != want[a.Text] {
				t.Errorf("%s (%s): %s, want %s", p.Name, a.Text, got, want[a.Text])
			}
			delete(want, a.Text)
		}
		if a.OnEvents() != (a.Kind != codegen.AttachBegin && a.Kind != codegen.AttachEnd && a.Kind != codegen.AttachInterval) {
			t.Errorf("%s: OnEvents %v", a.Text, a.OnEvents())
		}
	}
	if skb != codegen.SkbArgs || glob == 0 || len(want) > 0 {
		t.Errorf("%d skb: programs (want %d), %d glob programs; no program for %v", skb, codegen.SkbArgs, glob, want)
	}
}

// TestAttachKprobeMulti: with the kprobe-multi backends, the kprobe form
// of skb: and skbret: (their entry programs too) and kprobe: globs'
// programs are kprobe-multi programs, a merged program's probes as well
// (rebuilt where the kernel refuses it merged); a single kprobe stays a
// kprobe. They load.
func TestAttachKprobeMulti(t *testing.T) {
	const text = `skb:ip_rcv_core { @a = count() }
skb:ip_rcv_core { @b = count() }
skbret:ip_rcv_core { @c = count() }
kprobe:ip_rcv_* { @g = count() }
kprobe:ip_rcv { @k = count() }`
	for _, c := range []struct {
		skb, glob codegen.Backend
	}{{"", ""}, {codegen.BackendKprobeMulti, ""}, {"", codegen.BackendKprobeMulti}, {codegen.BackendKprobeMulti, codegen.BackendKprobeMulti}} {
		out := compileWith(t, text, codegen.Options{Backend: c.skb, GlobBackend: c.glob})
		merged := 0
		for _, p := range out.Programs {
			want := p.Attach.Kind == codegen.AttachSkbFuncs && c.skb == codegen.BackendKprobeMulti ||
				p.Attach.Kind == codegen.AttachKprobes && c.glob == codegen.BackendKprobeMulti
			progs := []*codegen.Program{p}
			if len(p.Merged) > 0 {
				merged++
				progs = append(progs, p.Unmerge()...)
			}
			for _, q := range progs {
				if q.Attach.Multi != want || (q.Prog.AttachType == ebpf.AttachTraceKprobeMulti) != want {
					t.Errorf("backends %q, %q: %s (%s): multi %v, attach type %v", c.skb, c.glob, q.Name, q.Attach.Text, q.Attach.Multi, q.Prog.AttachType)
				}
			}
		}
		if merged == 0 {
			t.Errorf("backends %q, %q: the two skb:ip_rcv_core probes are not merged", c.skb, c.glob)
		}
		load(t, out)
	}
}
