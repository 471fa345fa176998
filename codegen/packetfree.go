package codegen

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// HelperSlabFree marks a followed skb ended where its memory goes back to
// the slab (the kmem_cache_free tracepoint), on the tracepoint backend,
// where the fentry programs of trackEnds cannot attach: an skb freed with
// no free tracepoint (a TCP ACK's __kfree_skb, a coalesced segment's
// kfree_skb_partial) would otherwise stay followed, and the next skb at
// its address be taken for it (--filter would print unrelated packets).
// It looks up every object the slab takes back, skbs or not, which the
// function backends, marking where skbs alone go, do not pay.
const HelperSlabFree = "slabfree"

// slabFreeHelper is the tp_btf program on kmem_cache_free(call_site, ptr,
// ...): a followed skb at ptr, or at ptr + sizeof(struct sk_buff) (an
// fclone's second skb, the clone TCP sends, whose object goes back under
// the first's address), is marked ended with its fingerprint, read while
// the object is still whole. (No other skb starts there: the skb caches'
// objects are cache-line aligned, further apart.)
func slabFreeHelper(skb *btf.Struct) (*Program, error) {
	key := int16(-8)
	var insns asm.Instructions
	for i, at := range []int32{0, int32(skb.Size)} {
		next := fmt.Sprintf("next%d", i)
		insns = append(insns,
			asm.LoadMem(asm.R6, asm.R9, 8, asm.DWord).WithSymbol(fmt.Sprintf("at%d", i)),
			asm.Add.Imm(asm.R6, at),
		)
		insns = append(insns, trackedKeyInsns(asm.R6, key)...)
		insns = append(insns,
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, next),
			asm.Mov.Reg(asm.R7, asm.R0),
			asm.LoadMem(asm.R1, asm.R7, 0, asm.Word),
			asm.JNE.Imm(asm.R1, trackFollowed, next),
		)
		ended, err := endedInsns(skb)
		if err != nil {
			return nil, err
		}
		insns = append(insns, ended...)
		insns = append(insns, asm.Mov.Reg(asm.R0, asm.R0).WithSymbol(next))
	}
	insns = append([]asm.Instruction{asm.Mov.Reg(asm.R9, asm.R1)}, insns...)
	insns = append(insns, asm.Mov.Imm(asm.R0, 0), asm.Return())
	const tp, name = "kmem_cache_free", "untrack_slab"
	return &Program{Name: name, SkbArg: -1, Helper: HelperSlabFree, Tracepoint: tp,
		Attach: Attach{Kind: AttachTpBTF, Text: "track()", Name: tp},
		Prog:   &ebpf.ProgramSpec{Name: name, License: "GPL", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp, AttachTo: tp, Instructions: insns}}, nil
}
