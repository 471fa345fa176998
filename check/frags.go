package check

import (
	"github.com/cilium/ebpf/btf"
)

// FragLayout is where a non-linear skb's paged data is described:
// skb_shinfo(skb)->nr_frags and ->frags[], and in each skb_frag_t the
// page, the length and the offset in the page. Byte offsets.
type FragLayout struct {
	NrFrags, Frags uint32
	// FragSize is sizeof(skb_frag_t), MaxFrags the array's length
	// (MAX_SKB_FRAGS).
	FragSize, MaxFrags uint32
	Page, Len, Off     uint32
	// LenSize and OffSize are 2 or 4 bytes.
	LenSize, OffSize uint32
}

// fragLayout reads the layout from BTF. skb_frag_t has been a struct with
// page.p, page_offset and size (before 5.4), a struct bio_vec with bv_page,
// bv_len and bv_offset (5.4 to 6.7), and a struct skb_frag with netmem,
// len and offset (6.8 on; netmem's low bit set marks memory that is not a
// page, which is not read). nil where none of these is found.
func fragLayout(spec BTF) *FragLayout {
	if spec == nil {
		return nil
	}
	var sh *btf.Struct
	if err := spec.TypeByName("skb_shared_info", &sh); err != nil {
		return nil
	}
	nr, nrOff, ok1 := FindMember(sh, "nr_frags")
	fr, frOff, ok2 := FindMember(sh, "frags")
	if !ok1 || !ok2 || nr.BitfieldSize != 0 {
		return nil
	}
	arr, ok := btf.UnderlyingType(fr.Type).(*btf.Array)
	if !ok {
		return nil
	}
	frag, ok := btf.UnderlyingType(arr.Type).(*btf.Struct)
	if !ok {
		return nil
	}
	l := &FragLayout{NrFrags: nrOff / 8, Frags: frOff / 8, FragSize: frag.Size, MaxFrags: arr.Nelems}
	find := func(names ...[]string) (uint32, uint32, bool) {
		for _, path := range names {
			var t btf.Type = frag
			var off uint32
			var m btf.Member
			found := true
			for _, n := range path {
				var o uint32
				if m, o, found = FindMember(t, n); !found {
					break
				}
				off += o
				t = btf.UnderlyingType(m.Type)
			}
			if found {
				size, err := btf.Sizeof(t)
				if err != nil || m.BitfieldSize != 0 {
					return 0, 0, false
				}
				return off / 8, uint32(size), true
			}
		}
		return 0, 0, false
	}
	var ps uint32
	l.Page, ps, ok1 = find([]string{"netmem"}, []string{"bv_page"}, []string{"page", "p"})
	l.Len, l.LenSize, ok2 = find([]string{"len"}, []string{"bv_len"}, []string{"size"})
	var ok3 bool
	l.Off, l.OffSize, ok3 = find([]string{"offset"}, []string{"bv_offset"}, []string{"page_offset"})
	if !ok1 || !ok2 || !ok3 || ps != 8 || (l.LenSize != 4 && l.LenSize != 2) || (l.OffSize != 4 && l.OffSize != 2) {
		return nil
	}
	return l
}
