package check

import (
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// The C types a script defines in its preamble (lang.CTypeDef) become BTF
// types, laid out as C lays them out, so that a cast to one, a member
// read through it and sizeof work as on the kernel's own types. An
// enum's enumerators are integer constants.

// scriptTypes are the script's C types, by "struct NAME" or "union NAME".
type scriptTypes struct {
	byName      map[string]btf.Type
	enumerators map[string]int64
	// enumOf is the enum each enumerator belongs to: an enumerator's value
	// prints by its name, as bpftrace symbolizes it.
	enumOf map[string]*btf.Enum
	// align is the alignment of the types whose attributes set it
	// (packed: 1; aligned(N)), which their members do not tell.
	align map[btf.Type]uint32
}

// cBaseTypes are C's and bpftrace's integer type names.
var cBaseTypes = map[string]*btf.Int{}

func init() {
	add := func(size uint32, signed bool, names ...string) {
		for _, n := range names {
			t := &btf.Int{Name: n, Size: size}
			if signed {
				t.Encoding = btf.Signed
			}
			cBaseTypes[n] = t
		}
	}
	add(1, true, "char", "signed char", "int8")
	add(1, false, "unsigned char", "uint8")
	add(2, true, "short", "short int", "signed short", "signed short int", "int16")
	add(2, false, "unsigned short", "unsigned short int", "uint16")
	add(4, true, "int", "signed", "signed int", "int32")
	add(4, false, "unsigned", "unsigned int", "uint32")
	add(8, true, "long", "long int", "signed long", "signed long int", "long long", "long long int", "signed long long", "signed long long int", "int64")
	add(8, false, "unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int", "uint64")
	cBaseTypes["_Bool"] = &btf.Int{Name: "_Bool", Size: 1, Encoding: btf.Bool}
	cBaseTypes["bool"] = &btf.Int{Name: "bool", Size: 1, Encoding: btf.Bool}
}

// defineTypes builds the script's C types, in order: a member may name
// a type defined before it, or the kernel's.
func (c *checker) defineTypes(defs []*lang.CTypeDef) {
	c.defined = scriptTypes{byName: map[string]btf.Type{}, enumerators: map[string]int64{}, enumOf: map[string]*btf.Enum{}, align: map[btf.Type]uint32{}}
	for _, def := range defs {
		key := def.Kind + " " + def.Name
		if def.Name != "" {
			if _, dup := c.defined.byName[key]; dup {
				c.errorf(nameNode{def.NameSpan}, "define each type once", "%s is defined twice", key)
				continue
			}
		}
		switch def.Kind {
		case "enum":
			en := &btf.Enum{Name: def.Name, Size: 4, Signed: true}
			for _, v := range def.Values {
				if _, dup := c.defined.enumerators[v.Name]; dup {
					c.errorf(nameNode{v.At}, "", "enumerator %s is defined twice", v.Name)
					continue
				}
				c.defined.enumerators[v.Name] = v.Value
				c.defined.enumOf[v.Name] = en
				en.Values = append(en.Values, btf.EnumValue{Name: v.Name, Value: uint64(v.Value)})
			}
			if def.Name != "" {
				c.defined.byName[key] = en
			}
		default:
			// Registered before its members are laid out: a member may
			// point at the struct itself (struct Foo *next).
			var t btf.Type = &btf.Struct{Name: def.Name}
			if def.Kind == "union" {
				t = &btf.Union{Name: def.Name}
			}
			c.defined.byName[key] = t
			if !c.layOut(def, t) {
				delete(c.defined.byName, key)
			}
		}
	}
}

// layOut lays a struct or union out as C does: each member at the next
// offset its alignment allows (a union's all at 0), bitfields packed in
// their type's unit, the size rounded up to the largest alignment.
func (c *checker) layOut(def *lang.CTypeDef, into btf.Type) bool {
	var members []btf.Member
	var bit, maxAlign, size uint32 = 0, 1, 0
	attrs, ok := c.typeAttrs(def)
	if !ok {
		return false
	}
	for _, f := range def.Fields {
		t, ok := c.fieldType(f)
		if !ok {
			return false
		}
		if t == into {
			c.errorf(nameNode{f.TypeSpan}, "point at it: "+def.Kind+" "+def.Name+" *"+f.Name, "%s %s holds itself", def.Kind, def.Name)
			return false
		}
		sz, err := btf.Sizeof(t)
		if err != nil {
			c.errorf(nameNode{f.TypeSpan}, "", "member %s: %v", f.Name, err)
			return false
		}
		align := c.alignOf(t)
		if attrs.packed {
			align = 1
		}
		maxAlign = max(maxAlign, align)
		m := btf.Member{Name: f.Name, Type: t}
		if def.Kind == "union" {
			m.Offset = 0
			if f.Bits > 0 {
				m.BitfieldSize = btf.Bits(f.Bits)
			}
			size = max(size, uint32(sz))
			members = append(members, m)
			continue
		}
		switch {
		case f.Bits > 0:
			unit := uint32(sz) * 8
			if uint32(f.Bits) > unit {
				c.errorf(nameNode{f.At}, "", "bitfield %s is wider than its type", f.Name)
				return false
			}
			if !attrs.packed && bit%unit+uint32(f.Bits) > unit {
				bit = (bit + unit - 1) / unit * unit
			}
			m.Offset, m.BitfieldSize = btf.Bits(bit), btf.Bits(f.Bits)
			bit += uint32(f.Bits)
		default:
			a := align * 8
			bit = (bit + a - 1) / a * a
			m.Offset = btf.Bits(bit)
			bit += uint32(sz) * 8
		}
		members = append(members, m)
	}
	if def.Kind == "struct" {
		size = (bit + 7) / 8
	}
	maxAlign = max(maxAlign, attrs.align)
	size = (size + maxAlign - 1) / maxAlign * maxAlign
	if attrs.packed || attrs.align > 0 {
		c.defined.align[into] = maxAlign
	}
	switch u := into.(type) {
	case *btf.Union:
		u.Size, u.Members = size, members
	case *btf.Struct:
		u.Size, u.Members = size, members
	}
	return true
}

// fieldType is a member's type: its base, pointers to it, arrays of it.
func (c *checker) fieldType(f *lang.CField) (btf.Type, bool) {
	t, ok := c.cBaseType(f.Type, f.TypeSpan, f.Ptr > 0)
	if !ok {
		return nil, false
	}
	for range f.Ptr {
		t = &btf.Pointer{Target: t}
	}
	for i := len(f.Dims) - 1; i >= 0; i-- {
		t = &btf.Array{Index: cBaseTypes["unsigned int"], Type: t, Nelems: uint32(f.Dims[i])}
	}
	return t, true
}

// cBaseType resolves a base type's name: C's integer types, bpftrace's
// (int32), the script's structs, unions and enums, then the kernel's
// types by name (struct sock, u32, uint64_t). A pointer may point at
// void or a struct the kernel does not have.
func (c *checker) cBaseType(name string, at lang.Span, pointee bool) (btf.Type, bool) {
	if t, ok := cBaseTypes[name]; ok {
		return t, true
	}
	if name == "void" && pointee {
		return &btf.Void{}, true
	}
	if t, ok := c.defined.byName[name]; ok {
		return t, true
	}
	tag, tname, tagged := strings.Cut(name, " ")
	if tagged && tag == "enum" {
		var en *btf.Enum
		if c.opts.BTF.TypeByName(tname, &en) == nil {
			return en, true
		}
	} else if tagged {
		if t, ok := c.kernelTagged(tag, tname); ok {
			return t, true
		}
	} else {
		for _, t := range anyNamed(c.opts.BTF, name) {
			switch t.(type) {
			case *btf.Typedef, *btf.Int:
				return t, true
			}
		}
	}
	if pointee && tagged {
		// An incomplete type, as C allows behind a pointer.
		return &btf.Fwd{Name: tname}, true
	}
	c.errorf(nameNode{at}, "types are C's integers (int, unsigned long...), bpftrace's (uint32), the script's own, and the kernel's (struct sock, u32)",
		"unknown type %q", name)
	return nil, false
}

// kernelTagged finds a kernel struct or union by name.
func (c *checker) kernelTagged(tag, name string) (btf.Type, bool) {
	if tag == "union" {
		var u *btf.Union
		return u, c.opts.BTF.TypeByName(name, &u) == nil
	}
	var s *btf.Struct
	return s, c.opts.BTF.TypeByName(name, &s) == nil
}

// anyNamed returns the kernel's types of a name, nil where it has none.
func anyNamed(spec BTF, name string) []btf.Type {
	ts, err := spec.AnyTypesByName(name)
	if err != nil {
		return nil
	}
	return ts
}

// alignOf is a type's alignment in bytes, as C aligns it on 64-bit
// targets.
func alignOf(t btf.Type) uint32 {
	switch u := btf.UnderlyingType(t).(type) {
	case *btf.Int:
		return max(1, u.Size)
	case *btf.Enum:
		return max(1, u.Size)
	case *btf.Pointer:
		return 8
	case *btf.Array:
		return alignOf(u.Type)
	case *btf.Struct, *btf.Union:
		a := uint32(1)
		for _, m := range types.Members(u) {
			a = max(a, alignOf(m.Type))
		}
		return a
	}
	return 8
}

// scriptEnumerator finds an enumerator the script defines.
func (c *checker) scriptEnumerator(e *lang.Ident) (types.Type, bool) {
	v, ok := c.defined.enumerators[e.Name]
	if !ok {
		return types.Type{}, false
	}
	c.info.Consts[e] = Const{Int: uint64(v)}
	if en := c.defined.enumOf[e.Name]; en != nil {
		// bpftrace prints it by name (`@ = ONE` is "@: ONE"); arithmetic
		// on it gives a plain integer.
		return types.Type{Kind: types.Int, Size: 8, Signed: true, Fmt: types.FmtEnum, BTF: en}, true
	}
	return types.S64, true
}

// scriptEnum finds an enum the script names in a cast ("enum BAZ"): the
// script's, or the kernel's.
func (c *checker) scriptEnum(typ string) (*btf.Enum, bool) {
	tag, name, _ := strings.Cut(typ, " ")
	if tag != "enum" {
		return nil, false
	}
	if en, ok := c.defined.byName[typ].(*btf.Enum); ok {
		return en, true
	}
	var en *btf.Enum
	if c.opts.BTF != nil && c.opts.BTF.TypeByName(name, &en) == nil {
		return en, true
	}
	return nil, false
}

// scriptTagged finds a struct or union the script defines ("struct Foo").
func (c *checker) scriptTagged(typ string) (btf.Type, bool) {
	t, ok := c.defined.byName[typ]
	if !ok {
		return nil, false
	}
	switch t.(type) {
	case *btf.Struct, *btf.Union:
		return t, true
	}
	return nil, false
}
