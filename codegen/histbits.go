package codegen

import "github.com/cilium/ebpf/asm"

// histBits turns hist's bucket 2 + log2(v) in R0 into hist(n, k)'s, with
// the value (positive) in R3: v + 1 below 2^k (a bucket each), else
// 1 + 2^k*(j-k) + (v >> (j-k)) for j = log2(v) (MapLayout.HistBits,
// HistBucket). It jumps to set with the bucket in R0.
func (g *gen) histBits(k int64, set string) {
	small := g.label("hist_small")
	g.emit(
		asm.Sub.Imm(asm.R0, 2+int32(k)), // j - k
		asm.JSLT.Imm(asm.R0, 0, small),
		asm.Mov.Reg(asm.R2, asm.R3),
		asm.RSh.Reg(asm.R2, asm.R0),
		asm.LSh.Imm(asm.R0, int32(k)),
		asm.Add.Reg(asm.R0, asm.R2),
		asm.Add.Imm(asm.R0, 1),
		asm.Ja.Label(set),
		asm.Mov.Reg(asm.R0, asm.R3).WithSymbol(small),
		asm.Add.Imm(asm.R0, 1),
	)
}
