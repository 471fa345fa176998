package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// A tseries map's element is one interval slot (the key's last u64, the
// interval's number modulo the number of intervals) of one key, per CPU:
// [epoch, value, count, ns] (tseriesValueSize bytes). epoch is the
// interval's number, the TAI clock divided by the interval (so intervals
// start on the wall clock's whole seconds, as bpftrace's do); value is
// the last value or the aggregation's (avg keeps the sum), count how many
// values the interval took, ns when the last was recorded (the runtime
// takes the last of every CPU's). A slot whose epoch is older than the
// current one is overwritten: the map keeps the last intervals only.
const (
	tseriesValueSize = 32
	tsEpoch          = 0
	tsValue          = 8
	tsCount          = 16
	tsTime           = 24
)

// tseries records the value on the stack into the map of `@m[k...] =
// tseries(value, interval, n[, agg])`.
func (g *gen) tseries(m *lang.MapExpr, spec *ebpf.MapSpec, c *lang.CallExpr) error {
	interval, ok1 := g.info.ConstInt(c.Args[1])
	n, ok2 := g.info.ConstInt(c.Args[2])
	agg := int64(0)
	if len(c.Args) == 4 {
		s, ok := g.info.Consts[c.Args[3]]
		if !ok || !s.IsStr {
			return unsupported(c, "tseries of an aggregation not a string literal")
		}
		agg = stdlib.TseriesAggs[s.Str]
	}
	if !ok1 || !ok2 || interval <= 0 || n <= 0 {
		return unsupported(c, "tseries without constant bounds")
	}
	g.maps.layout(m.Name).Tseries = &[3]int64{interval, n, agg}
	val, err := g.frame.alloc(tseriesValueSize)
	if err != nil {
		return err
	}
	g.vs.pop(asm.R1)
	g.emit(
		asm.StoreMem(asm.RFP, val+tsValue, asm.R1, asm.DWord),
		storeImm64(val+tsCount, 1),
		asm.FnKtimeGetTaiNs.Call(),
		asm.StoreMem(asm.RFP, val+tsTime, asm.R0, asm.DWord),
	)
	if fitsImm(interval) {
		g.emit(asm.Div.Imm(asm.R0, int32(interval)))
	} else {
		g.emit(asm.LoadImm(asm.R1, interval, asm.DWord), asm.Div.Reg(asm.R0, asm.R1))
	}
	g.emit(
		asm.StoreMem(asm.RFP, val+tsEpoch, asm.R0, asm.DWord),
		asm.Mod.Imm(asm.R0, int32(n)),
	)
	if err := g.vs.push(asm.R0); err != nil {
		return err
	}
	key, err := g.buildKey(m)
	if err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, key+int16(spec.KeySize)-8, asm.R0, asm.DWord))
	create, reset, done := g.label("ts_new"), g.label("ts_reset"), g.label("ts_done")
	g.lookup(spec.Name, key)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, create),
		asm.LoadMem(asm.R1, asm.R0, tsEpoch, asm.DWord),
		asm.LoadMem(asm.R2, asm.RFP, val+tsEpoch, asm.DWord),
		asm.JNE.Reg(asm.R1, asm.R2, reset),
		asm.LoadMem(asm.R3, asm.RFP, val+tsValue, asm.DWord),
		asm.LoadMem(asm.R4, asm.R0, tsValue, asm.DWord),
	)
	switch agg {
	case stdlib.TseriesAggs["max"]:
		g.emit(asm.JSLE.Reg(asm.R3, asm.R4, done))
	case stdlib.TseriesAggs["min"]:
		g.emit(asm.JSGE.Reg(asm.R3, asm.R4, done))
	case stdlib.TseriesAggs["avg"], stdlib.TseriesAggs["sum"]:
		g.emit(asm.Add.Reg(asm.R3, asm.R4))
	}
	g.emit(
		asm.StoreMem(asm.R0, tsValue, asm.R3, asm.DWord),
		asm.LoadMem(asm.R1, asm.R0, tsCount, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, tsCount, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, val+tsTime, asm.DWord),
		asm.StoreMem(asm.R0, tsTime, asm.R1, asm.DWord),
		asm.Ja.Label(done),
	)
	// A newer interval on this CPU: the slot starts again.
	for off := int16(0); off < tseriesValueSize; off += 8 {
		ins := asm.LoadMem(asm.R1, asm.RFP, val+off, asm.DWord)
		if off == 0 {
			ins = ins.WithSymbol(reset)
		}
		g.emit(ins, asm.StoreMem(asm.R0, off, asm.R1, asm.DWord))
	}
	g.emit(asm.Ja.Label(done))
	g.mark(create)
	g.update(spec.Name, key, val)
	g.mark(done)
	return nil
}
