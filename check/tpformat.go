package check

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// A classic tracepoint program (BPF_PROG_TYPE_TRACEPOINT) reads the record
// the kernel's trace_event_raw_event_CLASS function writes: the fields
// tracefs' events/CAT/NAME/format lists, which are bpftrace's args.NAME.
// Their layout is the BTF struct trace_event_raw_CLASS; the format file says
// which class an event belongs to (its fields and offsets) and names the
// fields of events that have no such struct (the syscalls).

// formatField is one line of a tracefs format file.
type formatField struct {
	Name    string
	CType   string // the C type, without the array suffix
	Elems   int    // array length, 0 for a scalar
	Offset  int
	Size    int
	Signed  bool
	DataLoc bool // __data_loc: a u32 holding the data's offset and length
}

// parseFormat reads the fields of a tracefs format file, leaving out the
// common_ fields every event starts with.
func parseFormat(text string) ([]formatField, error) {
	var out []formatField
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "field:") {
			continue
		}
		var f formatField
		for _, part := range strings.Split(line, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(part), ":")
			if !ok {
				continue
			}
			var err error
			switch k {
			case "field":
				f.CType, f.Name, f.Elems, f.DataLoc = splitDecl(v)
			case "offset":
				f.Offset, err = strconv.Atoi(v)
			case "size":
				f.Size, err = strconv.Atoi(v)
			case "signed":
				f.Signed = v == "1"
			}
			if err != nil {
				return nil, fmt.Errorf("format line %q: %w", line, err)
			}
		}
		if f.Name == "" || strings.HasPrefix(f.Name, "common_") {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// splitDecl splits "unsigned char saddr[4]" into its type, name and length.
func splitDecl(d string) (ctype, name string, elems int, dataLoc bool) {
	d = strings.TrimSpace(d)
	if rest, ok := strings.CutPrefix(d, "__data_loc "); ok {
		d, dataLoc = rest, true
	}
	if i := strings.IndexByte(d, '['); i >= 0 && strings.HasSuffix(d, "]") {
		n, _ := strconv.Atoi(d[i+1 : len(d)-1])
		d, elems = strings.TrimSpace(d[:i]), n
	}
	i := strings.LastIndexAny(d, " *")
	if i < 0 {
		return "", d, elems, dataLoc
	}
	ctype, name = strings.TrimSpace(d[:i+1]), d[i+1:]
	if dataLoc {
		// "char[] name": the [] belongs to the type.
		ctype = strings.TrimSuffix(ctype, "[]")
	}
	return ctype, name, elems, dataLoc
}

// DataLoc is a __data_loc field of a tracepoint record: a u32 at Offset
// whose low 16 bits are where, from the record's start, its string is.
type DataLoc struct {
	Offset int
	Size   int // bytes of string read
}

// tracepointRecord builds the struct a classic tracepoint program's context
// points to: one member per format field, typed from the kernel's
// trace_event_raw_CLASS where a member of that name is at that offset.
// dataLocs are the __data_loc fields, read as strings. text is the tracefs
// format file, or "" where it is unreadable: the layout then comes from BTF
// alone, when the event's class is certain.
func (c *checker) tracepointRecord(name, text string) (*btf.Struct, map[string]DataLoc, error) {
	var fields []formatField
	if text != "" {
		var err error
		if fields, err = parseFormat(text); err != nil {
			return nil, nil, err
		}
	}
	raw := c.rawEventStruct(name, fields)
	if text == "" {
		if raw == nil {
			return nil, nil, fmt.Errorf("no BTF layout of its record is certain and tracefs is not readable")
		}
		fields = fieldsOf(raw)
	}
	rec := &btf.Struct{Name: "trace_event_raw_" + name}
	locs := map[string]DataLoc{}
	for _, f := range fields {
		if f.DataLoc {
			locs[f.Name] = DataLoc{Offset: f.Offset, Size: 64}
			continue
		}
		var typ btf.Type
		if raw != nil {
			if m, off, ok := FindMember(raw, f.Name); ok && int(off/8) == f.Offset {
				typ = m.Type
			}
		}
		if typ == nil {
			typ = c.recordPointer(f)
		}
		if typ == nil {
			typ = cType(f)
		}
		rec.Members = append(rec.Members, btf.Member{Name: f.Name, Type: typ, Offset: btf.Bits(f.Offset * 8)})
		rec.Size = max(rec.Size, uint32(f.Offset+f.Size))
	}
	return rec, locs, nil
}

// cType types a format field from its C declaration: pointers are u64
// (often user addresses, as in the syscalls), arrays of its elements.
func cType(f formatField) btf.Type {
	size := f.Size
	if f.Elems > 0 {
		size = f.Size / f.Elems
	}
	enc := btf.Unsigned
	if f.Signed {
		enc = btf.Signed
	}
	if strings.Contains(f.CType, "*") {
		size, enc = 8, btf.Unsigned
	}
	var t btf.Type = &btf.Int{Name: f.CType, Size: uint32(size), Encoding: enc}
	if f.Elems > 0 {
		t = &btf.Array{Index: &btf.Int{Name: "int", Size: 4}, Type: t, Nelems: uint32(f.Elems)}
	}
	return t
}

// recordPointer types a format field declared a pointer to a struct or
// union (struct __kernel_timespec * rqtp) as a pointer to BTF's, so that
// args.rqtp->tv_sec reads through it, and one declared a pointer to
// pointers (const char *const * argv) as such, so that args.argv[1] is a
// string's address; nil for other fields (a char * stays the u64 it was,
// which str() reads), and where BTF has no such type.
func (c *checker) recordPointer(f formatField) btf.Type {
	if f.Elems > 0 || f.DataLoc || f.Size != 8 {
		return nil
	}
	var words []string
	stars := 0
	for _, w := range strings.Fields(strings.ReplaceAll(f.CType, "*", " * ")) {
		switch w {
		case "const", "volatile":
		case "*":
			stars++
		default:
			if stars > 0 {
				return nil // a word after a star: not a plain pointer
			}
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return nil
	}
	var base btf.Type
	switch tag, name := words[0], strings.Join(words[1:], " "); {
	case stars == 1 && tag == "struct" && len(words) == 2:
		var st *btf.Struct
		if c.opts.BTF.TypeByName(name, &st) != nil {
			return nil
		}
		base = st
	case stars == 1 && tag == "union" && len(words) == 2:
		var un *btf.Union
		if c.opts.BTF.TypeByName(name, &un) != nil {
			return nil
		}
		base = un
	case stars == 2 && tag != "struct" && tag != "union":
		var in *btf.Int
		if c.opts.BTF.TypeByName(strings.Join(words, " "), &in) != nil {
			return nil
		}
		base = &btf.Pointer{Target: in}
	default:
		return nil
	}
	return &btf.Pointer{Target: base}
}

// fieldsOf lists a trace_event_raw struct's members as format fields.
func fieldsOf(raw *btf.Struct) []formatField {
	var out []formatField
	for _, m := range raw.Members {
		if m.Name == "ent" || m.Name == "__data" {
			continue
		}
		size, _ := btf.Sizeof(m.Type)
		f := formatField{Name: m.Name, Offset: int(m.Offset / 8), Size: size}
		if n, ok := strings.CutPrefix(m.Name, "__data_loc_"); ok {
			f.Name, f.DataLoc = n, true
		}
		out = append(out, f)
	}
	return out
}

// rawEventStruct finds the trace_event_raw_CLASS struct of an event: its
// own (TRACE_EVENT) or, for an event defined from a class, the class whose
// layout has every format field at its offset. Without format fields only
// a certain answer is given: the event's own struct, or the one class whose
// __bpf_trace_CLASS prototype is the event's.
func (c *checker) rawEventStruct(name string, fields []formatField) *btf.Struct {
	matches := func(s *btf.Struct) bool {
		for _, f := range fields {
			mname := f.Name
			if f.DataLoc {
				mname = "__data_loc_" + f.Name
			}
			if _, off, ok := FindMember(s, mname); !ok || int(off/8) != f.Offset {
				return false
			}
		}
		return true
	}
	var own *btf.Struct
	if err := c.opts.BTF.TypeByName("trace_event_raw_"+name, &own); err == nil && (fields == nil || matches(own)) {
		return own
	}
	var proto *btf.FuncProto
	var td *btf.Typedef
	if err := c.opts.BTF.TypeByName("btf_trace_"+name, &td); err == nil {
		if p, ok := btf.UnderlyingType(td.Type).(*btf.Pointer); ok {
			proto, _ = p.Target.(*btf.FuncProto)
		}
	}
	var found []*btf.Struct
	idx := indexOf(c.opts.BTF)
	for _, s := range idx.rawEvents {
		class := strings.TrimPrefix(s.Name, "trace_event_raw_")
		if proto != nil {
			if cp, ok := idx.classes[class]; !ok || !sameParamTypes(cp, proto) {
				continue
			}
		}
		if fields != nil && !matches(s) {
			continue
		}
		if proto == nil && fields == nil {
			continue
		}
		found = append(found, s)
	}
	if len(found) == 1 || (fields != nil && len(found) > 0) {
		return found[0]
	}
	return nil
}
