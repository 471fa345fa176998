package pipeline_test

import (
	"errors"
	"os"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
)

// filterSizes pins the size, in instructions as generated, of the program
// `--filter 'udp and dst port 9'` runs on every skb function (its gate
// of track() included: it follows what it matches), per backend
// (bench/vm.sh's script): a change of the generated code that grows it
// shows here, for review, before the VM suite shows the cost (fentry
// verifies it once per function).
var filterSizes = map[codegen.Backend]int{
	codegen.BackendKprobe:      1405,
	codegen.BackendKprobeMulti: 1405,
	codegen.BackendFentry:      1364,
	codegen.BackendTracepoint:  1363,
}

// TestFilterProgramSize compiles --filter's program for each backend,
// checks its size against filterSizes and loads it into the kernel (fentry
// and tp_btf programs where this kernel takes them).
func TestFilterProgramSize(t *testing.T) {
	text := pipeline.FilterScript("udp and dst port 9", false, true, pipeline.Hops{}).Text
	for b, want := range filterSizes {
		opts := codegen.Options{Backend: b, SkbTargets: map[string][]codegen.SkbTarget{}}
		switch b {
		case codegen.BackendFentry:
			opts.SkbTargets["*"] = []codegen.SkbTarget{{Name: "ip_rcv", Fentry: true, SkbArg: 0}}
		case codegen.BackendTracepoint:
			opts.SkbTargets["*"] = []codegen.SkbTarget{{Name: "netif_receive_skb", SkbArg: 0}}
		case codegen.BackendKprobeMulti, codegen.BackendKprobe:
			// One program for every place of the skb (codegen's
			// cookie.go; kprobes from 5.15, a program per place before).
			opts.SkbTargets["*"] = []codegen.SkbTarget{{SkbArg: -1, Cookie: true}}
		default:
			opts.SkbTargets["*"] = []codegen.SkbTarget{{SkbArg: 0}}
		}
		_, out := compiletest.Compile(t, text, check.Options{}, opts)
		// track()'s helpers (the filter follows its packets) aside.
		var own []*codegen.Program
		for _, p := range out.Programs {
			if p.Helper == "" {
				own = append(own, p)
			}
		}
		if len(own) != 1 {
			t.Fatalf("%s: %d programs", b, len(own))
		}
		p := own[0]
		if got := len(p.Prog.Instructions); got != want {
			t.Errorf("%s: --filter's program is %d instructions, was %d: update filterSizes if the change is meant, and bench/RESULTS.md's figures", b, got, want)
		}
		coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: out.Maps, Programs: map[string]*ebpf.ProgramSpec{p.Name: p.Prog}})
		switch {
		case err == nil:
			coll.Close()
		case b == codegen.BackendFentry && errors.Is(err, os.ErrPermission):
			t.Logf("%s: this kernel refuses fentry programs; size checked only", b)
		default:
			t.Errorf("%s: load: %v", b, err)
		}
	}
}
