package kernel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/skbtrace/skbtrace/lang/types"
)

// BTF kinds the scan needs (include/uapi/linux/btf.h).
const (
	kindInt       = 1
	kindPtr       = 2
	kindArray     = 3
	kindStruct    = 4
	kindUnion     = 5
	kindEnum      = 6
	kindFwd       = 7
	kindTypedef   = 8
	kindVolatile  = 9
	kindConst     = 10
	kindRestrict  = 11
	kindFunc      = 12
	kindFuncProto = 13
	kindVar       = 14
	kindDatasec   = 15
	kindFloat     = 16
	kindDeclTag   = 17
	kindTypeTag   = 18
	kindEnum64    = 19
)

// SkbFunc is a kernel function with a struct sk_buff * parameter.
type SkbFunc struct {
	Name   string
	Module string // "" for vmlinux
	// SkbArg is the position of the first struct sk_buff * parameter.
	SkbArg int
	// ReasonArg is the position of its enum skb_drop_reason parameter (the
	// drop functions': kfree_skb_reason, sk_skb_reason_drop...), or -1.
	ReasonArg int
	// Proto is the BTF id of its FUNC_PROTO, in its module's numbering.
	Proto uint32
	// NArgs is its number of parameters: an fexit program's return value
	// follows them.
	NArgs int
	// Ret is how it returns its value, which skbret: reads.
	Ret types.RetClass
}

// btfTypes is the part of a raw BTF blob the scan reads: each type's kind,
// name, referenced type, and where its trailing data is.
type btfTypes struct {
	data    []byte // the type section
	strs    []byte // the string section
	first   uint32 // id of the first type (1, or after the base for a module)
	strBase uint32 // offset of the first string (0, or the base's length)
	off     []uint32
	base    *btfTypes
}

// parseBTF indexes the types of a raw BTF blob, as /sys/kernel/btf files
// hold it. For a module, base is vmlinux: its ids and strings come first.
func parseBTF(raw []byte, base *btfTypes) (*btfTypes, error) {
	if len(raw) < 24 || binary.LittleEndian.Uint16(raw) != 0xeb9f {
		return nil, errors.New("not little-endian BTF")
	}
	le := binary.LittleEndian
	hdrLen := le.Uint32(raw[4:])
	typeOff, typeLen := le.Uint32(raw[8:]), le.Uint32(raw[12:])
	strOff, strLen := le.Uint32(raw[16:]), le.Uint32(raw[20:])
	if uint64(hdrLen)+uint64(typeOff)+uint64(typeLen) > uint64(len(raw)) || uint64(hdrLen)+uint64(strOff)+uint64(strLen) > uint64(len(raw)) {
		return nil, errors.New("truncated BTF")
	}
	t := &btfTypes{
		data:  raw[hdrLen+typeOff : hdrLen+typeOff+typeLen],
		strs:  raw[hdrLen+strOff : hdrLen+strOff+strLen],
		first: 1,
		base:  base,
	}
	if base != nil {
		t.first = base.first + uint32(len(base.off))
		t.strBase = base.strBase + uint32(len(base.strs))
	}
	for pos := 0; pos+12 <= len(t.data); {
		t.off = append(t.off, uint32(pos))
		info := le.Uint32(t.data[pos+4:])
		vlen := int(info & 0xffff)
		var extra int
		switch (info >> 24) & 0x1f {
		case kindInt, kindVar, kindDeclTag:
			extra = 4
		case kindArray:
			extra = 12
		case kindStruct, kindUnion, kindDatasec, kindEnum64:
			extra = 12 * vlen
		case kindEnum, kindFuncProto:
			extra = 8 * vlen
		case kindPtr, kindFwd, kindTypedef, kindVolatile, kindConst, kindRestrict, kindFunc, kindFloat, kindTypeTag:
		default:
			return nil, fmt.Errorf("unknown BTF kind %d", (info>>24)&0x1f)
		}
		pos += 12 + extra
	}
	return t, nil
}

// lookup returns the table holding id and the offset of its record.
func (t *btfTypes) lookup(id uint32) (*btfTypes, uint32, bool) {
	for ; t != nil; t = t.base {
		if id >= t.first && id < t.first+uint32(len(t.off)) {
			return t, t.off[id-t.first], true
		}
	}
	return nil, 0, false
}

func (t *btfTypes) kind(id uint32) (kind uint32, ref uint32, ok bool) {
	tt, off, ok := t.lookup(id)
	if !ok {
		return 0, 0, false
	}
	return (binary.LittleEndian.Uint32(tt.data[off+4:]) >> 24) & 0x1f, binary.LittleEndian.Uint32(tt.data[off+8:]), true
}

// name returns a string by offset, in base or module numbering.
func (t *btfTypes) name(off uint32) string {
	for ; t != nil; t = t.base {
		if off >= t.strBase && off < t.strBase+uint32(len(t.strs)) {
			s := t.strs[off-t.strBase:]
			if i := bytes.IndexByte(s, 0); i >= 0 {
				s = s[:i]
			}
			return string(s)
		}
	}
	return ""
}

// isSkbPtr reports whether id is a pointer, through typedefs and
// qualifiers, to one of the sk_buff struct ids.
func (t *btfTypes) isSkbPtr(id uint32, skb map[uint32]bool) bool {
	sawPtr := false
	for range 16 {
		k, ref, ok := t.kind(id)
		if !ok {
			return false
		}
		switch k {
		case kindPtr:
			if sawPtr {
				return false // struct sk_buff **
			}
			sawPtr = true
		case kindTypedef, kindVolatile, kindConst, kindRestrict, kindTypeTag:
		case kindStruct:
			return sawPtr && skb[id]
		default:
			return false
		}
		id = ref
	}
	return false
}

// skbStructs finds the ids of struct sk_buff in a blob.
func (t *btfTypes) skbStructs() map[uint32]bool {
	out := map[uint32]bool{}
	le := binary.LittleEndian
	for i, off := range t.off {
		if (le.Uint32(t.data[off+4:])>>24)&0x1f == kindStruct && t.name(le.Uint32(t.data[off:])) == "sk_buff" {
			out[t.first+uint32(i)] = true
		}
	}
	return out
}

// hasMember reports whether a struct of this name in the blob has a member
// of that name.
func (t *btfTypes) hasMember(structName, member string) bool {
	le := binary.LittleEndian
	for _, off := range t.off {
		info := le.Uint32(t.data[off+4:])
		if (info>>24)&0x1f != kindStruct || t.name(le.Uint32(t.data[off:])) != structName {
			continue
		}
		for i := range int(info & 0xffff) {
			m := off + 12 + uint32(12*i)
			if t.name(le.Uint32(t.data[m:])) == member {
				return true
			}
		}
	}
	return false
}

// skbFuncs lists the FUNC types of one blob whose prototype has a struct
// sk_buff * parameter.
func (t *btfTypes) skbFuncs(module string, skb map[uint32]bool) []SkbFunc {
	var out []SkbFunc
	le := binary.LittleEndian
	for _, off := range t.off {
		rec := t.data[off:]
		if (le.Uint32(rec[4:])>>24)&0x1f != kindFunc {
			continue
		}
		protoID := le.Uint32(rec[8:])
		pt, poff, ok := t.lookup(protoID)
		if !ok {
			continue
		}
		pinfo := le.Uint32(pt.data[poff+4:])
		if (pinfo>>24)&0x1f != kindFuncProto {
			continue
		}
		f := SkbFunc{SkbArg: -1, ReasonArg: -1, NArgs: int(pinfo & 0xffff), Ret: t.retClass(le.Uint32(pt.data[poff+8:]))}
		for i := range int(pinfo & 0xffff) {
			ptype := le.Uint32(pt.data[poff+12+uint32(8*i)+4:])
			switch {
			case f.SkbArg < 0 && t.isSkbPtr(ptype, skb):
				f.SkbArg = i
			case f.ReasonArg < 0 && t.isEnum(ptype, "skb_drop_reason"):
				f.ReasonArg = i
			}
		}
		if f.SkbArg >= 0 {
			f.Name, f.Module, f.Proto = t.name(le.Uint32(rec)), module, protoID
			out = append(out, f)
		}
	}
	return out
}

// isEnum reports whether id is, through typedefs and qualifiers, the enum
// of that name.
func (t *btfTypes) isEnum(id uint32, name string) bool {
	for range 16 {
		k, ref, ok := t.kind(id)
		if !ok {
			return false
		}
		switch k {
		case kindTypedef, kindVolatile, kindConst, kindRestrict, kindTypeTag:
		case kindEnum, kindEnum64:
			tt, off, _ := t.lookup(id)
			return tt.name(binary.LittleEndian.Uint32(tt.data[off:])) == name
		default:
			return false
		}
		id = ref
	}
	return false
}

// retClass is how a function whose return type is id returns its value:
// through typedefs and qualifiers, an integer, enum or pointer; void (id 0)
// and what no register holds (a struct by value) read as void.
func (t *btfTypes) retClass(id uint32) types.RetClass {
	le := binary.LittleEndian
	for range 16 {
		if id == 0 {
			return types.RetClass{}
		}
		tt, off, ok := t.lookup(id)
		if !ok {
			return types.RetClass{}
		}
		info := le.Uint32(tt.data[off+4:])
		size := le.Uint32(tt.data[off+8:])
		switch (info >> 24) & 0x1f {
		case kindPtr:
			return types.RetClass{Size: 8, Ptr: true}
		case kindInt:
			enc := le.Uint32(tt.data[off+12:]) >> 24
			if size > 8 {
				return types.RetClass{}
			}
			return types.RetClass{Size: uint8(size), Signed: enc&1 != 0}
		case kindEnum, kindEnum64:
			// The kind flag marks a signed enum.
			return types.RetClass{Size: uint8(size), Signed: info>>31 != 0}
		case kindTypedef, kindVolatile, kindConst, kindRestrict, kindTypeTag:
			id = size // the referenced type
		default:
			return types.RetClass{}
		}
	}
	return types.RetClass{}
}
