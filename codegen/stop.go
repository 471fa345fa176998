package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// StopMap is a one-entry array the runtime sets to 1 when tracing ends.
// Every program the kernel runs on an event reads it first and returns at
// once where it is set: the output is complete the moment tracing ends,
// while the links, whose closing the kernel may make slow (an RCU grace
// period per fentry function, say), are closed after the maps are printed.
const StopMap = "stop"

// OnEvents reports whether the kernel runs a probe kind's programs on
// events, so that they read StopMap first; BEGIN, END and interval
// programs are run by the runtime.
func OnEvents(k lang.ProbeKind) bool {
	switch k {
	case lang.ProbeBegin, lang.ProbeEnd, lang.ProbeInterval, lang.ProbeSelf, lang.ProbeTest, lang.ProbeBench:
		return false
	}
	return true
}

// stopGate returns from the program where StopMap is set: a load through
// the map value's address, no lookup.
func (g *gen) stopGate() {
	if _, ok := g.maps.specs[StopMap]; !ok {
		g.maps.specs[StopMap] = &ebpf.MapSpec{Name: StopMap, Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
	}
	g.emit(
		asm.LoadMapValue(asm.R0, 0, 0).WithReference(StopMap),
		asm.LoadMem(asm.R0, asm.R0, 0, asm.Word),
		asm.JNE.Imm(asm.R0, 0, exitLabel),
	)
}
