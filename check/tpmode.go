package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// argUse is what a probe reads of its arguments, to decide how a
// tracepoint is read: by its raw arguments (a tp_btf program: skb, location,
// reason...) or by its tracefs format fields as bpftrace does (a classic
// tracepoint program: skbaddr, protocol, saddr...).
type argUse struct {
	names []string // the NAME of every args.NAME and args->NAME
	// rawOnly is set when the probe reads what only the raw arguments
	// give: arg0..argN, a bare argument name, or an skb field.
	rawOnly bool
}

// scanArgs scans what the probe runs on this kernel: the predicate has()
// leaves (pred) and the branches of the body has() takes.
func (c *checker) scanArgs(p *lang.Probe, pred lang.Expr) argUse {
	var u argUse
	var scan func(n lang.Node) bool
	scan = func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.IfStmt:
			if v, ok := c.hasCond(p, n.Cond); ok {
				switch {
				case v:
					lang.Inspect(n.Then, scan)
				case n.Else != nil:
					lang.Inspect(n.Else, scan)
				}
				return false
			}
		case *lang.FieldExpr:
			if id, ok := n.X.(*lang.Ident); ok && id.Name == "args" {
				u.names = append(u.names, n.Name)
				return false
			}
		case *lang.Ident:
			if _, ok := argIndex(n.Name); ok {
				u.rawOnly = true
			}
			if f := stdlib.LookupField(n.Name); f != nil && c.needsRawArgs(f) {
				u.rawOnly = true
			}
		}
		return true
	}
	if pred != nil {
		lang.Inspect(pred, scan)
	}
	lang.Inspect(p.Body, scan)
	return u
}

// needsRawArgs reports whether a builtin field is read from the raw
// arguments: an skb field, or the drop reason where the kernel gives one
// (elsewhere it is a constant, which a format-field probe has too).
func (c *checker) needsRawArgs(f *stdlib.Field) bool {
	return f.Needs&stdlib.NeedSkb != 0 || f.Needs&stdlib.NeedReason != 0 && !c.noDropReasons()
}

// wantsRecord decides that a tracepoint spec is read by its format fields:
// the script names an argument the raw tracepoint does not have and
// nothing only the raw arguments give, or there are no raw arguments.
func wantsRecord(u argUse, si *SpecInfo, haveRaw bool) bool {
	if !haveRaw {
		return true
	}
	if u.rawOnly {
		return false
	}
	for _, n := range u.names {
		if !slices.ContainsFunc(si.Params, func(p Param) bool { return p.Name == n }) {
			return true
		}
	}
	return false
}

// useRecord resolves a tracepoint spec to its classic record. It reports
// false, having said why, when the tracepoint does not exist.
func (c *checker) useRecord(si *SpecInfo, haveRaw bool) bool {
	s := si.Spec
	cat, text := s.Category, ""
	if c.opts.TracepointFormat != nil {
		var err error
		cat, text, err = c.opts.TracepointFormat(s.Category, s.Name)
		if err != nil {
			if !haveRaw {
				c.errorf(s, didYouMean(s.Name, indexOf(c.opts.BTF).tracepoints), "unknown tracepoint %s:%s", s.Category, s.Name)
				return false
			}
			// The record can still come from BTF; the runtime says why it
			// cannot attach.
			cat, text = s.Category, ""
		}
	} else if !haveRaw {
		c.errorf(s, didYouMean(s.Name, indexOf(c.opts.BTF).tracepoints), "unknown tracepoint %s:%s", s.Category, s.Name)
		return false
	}
	rec, locs, err := c.tracepointRecord(s.Name, text)
	if err != nil {
		c.errorf(s, "mount tracefs: mount -t tracefs nodev /sys/kernel/tracing", "the format fields of tracepoint %s:%s are unknown: %v", s.Category, s.Name, err)
		return false
	}
	si.Record, si.DataLocs, si.Category = rec, locs, cat
	si.Params, si.Proto, si.SkbParam, si.ReasonParam = nil, nil, -1, -1
	return true
}

// recordMember resolves args.NAME on the classic tracepoints of a probe:
// the member of the first spec's record, of the same type in every other
// spec's. Where it lies elsewhere in another's record (sys_enter_open's
// filename and sys_enter_openat's), that spec's program reads it there
// (SpecInfo.RecordMembers), as bpftrace compiles the body per probe.
func (c *checker) recordField(e *lang.FieldExpr) (Member, bool) {
	m, ok := c.resolveMember(c.ctx.Record, e.Name, true)
	if !ok {
		var names []string
		for _, mb := range c.ctx.Record.Members {
			names = append(names, mb.Name)
		}
		for n := range c.ctx.DataLocs {
			names = append(names, n)
		}
		slices.Sort(names)
		hint := fmt.Sprintf("the fields are %v", names)
		if s := lang.Suggest(e.Name, names); s != "" {
			hint = "did you mean args." + s + "?"
		}
		c.errorf(e, hint, "no field %q in %s", e.Name, c.ctx.Record.Name)
		return Member{}, false
	}
	user := (m.Type.Kind == types.Ptr || declaredPointer(m.BTF)) && c.userRecord()
	m.Type.User = user
	own := map[*SpecInfo]Member{c.ctx.Specs[0]: m}
	first := m
	for _, si := range c.ctx.Specs[1:] {
		if si.Record == nil {
			continue
		}
		o, ok := c.resolveMember(si.Record, e.Name, true)
		if !ok {
			c.errorf(e, "split the probe list", "%s has no field args.%s, which %s has", si.Spec.Text, e.Name, c.ctx.Specs[0].Spec.Text)
			return Member{}, false
		}
		o.Type.User = user
		wide, ok := widenRecordType(m.Type, o.Type)
		if !ok || o.BitfieldSize != first.BitfieldSize {
			c.errorf(e, "split the probe list", "args.%s is %s in %s but %s in %s", e.Name, first.Type, c.ctx.Specs[0].Spec.Text, o.Type, si.Spec.Text)
			return Member{}, false
		}
		m.Type = wide
		own[si] = o
	}
	// A spec whose field lies elsewhere, or is narrower than the value
	// the expression holds, is read as its own record has it.
	for si, o := range own {
		if o.Offset != m.Offset || o.Type != m.Type {
			if si.RecordMembers == nil {
				si.RecordMembers = map[*lang.FieldExpr]Member{}
			}
			si.RecordMembers[e] = o
		}
	}
	return m, true
}

// declaredPointer reports whether a format field typed a u64 was declared
// a pointer (const char * filename): a syscall's is an address in the
// process's memory, which str() reads there, from a variable or a map too.
func declaredPointer(t btf.Type) bool {
	in, ok := t.(*btf.Int)
	return ok && strings.Contains(in.Name, "*")
}

// widenRecordType is the type of a field two tracepoints' records have,
// each its own way: the same type; pointers to the same type whatever
// their qualifiers (netif_rx's void *skbaddr, netif_rx_entry's const
// void *); integers printed alike, the wider of them (a u16 and a u32 are
// a u32, a u32 and an s32 an s64), each read at its own width.
func widenRecordType(a, b types.Type) (types.Type, bool) {
	switch {
	case a == b:
		return a, true
	case a.Kind == types.Ptr && b.Kind == types.Ptr:
		return a, types.CName(btf.UnderlyingType(a.BTF)) == types.CName(btf.UnderlyingType(b.BTF))
	case a.Kind != types.Int || b.Kind != types.Int || a.Fmt != b.Fmt || a.Fmt == types.FmtEnum:
		return a, a.String() == b.String()
	case a.Signed != b.Signed:
		return types.Type{Kind: types.Int, Size: 8, Signed: true, Fmt: a.Fmt}, true
	case b.Size > a.Size:
		return b, true
	}
	return a, true
}

// recordDataLoc resolves args.NAME on a __data_loc string of the classic
// tracepoints of a probe: the first spec's, and where another spec's lies
// elsewhere, that spec's (SpecInfo.RecordDataLocs).
func (c *checker) recordDataLoc(e *lang.FieldExpr, loc DataLoc) bool {
	for _, si := range c.ctx.Specs[1:] {
		if si.Record == nil {
			continue
		}
		o, ok := si.DataLocs[e.Name]
		if !ok {
			c.errorf(e, "split the probe list", "args.%s is a string in %s but not in %s", e.Name, c.ctx.Specs[0].Spec.Text, si.Spec.Text)
			return false
		}
		if o != loc {
			if si.RecordDataLocs == nil {
				si.RecordDataLocs = map[lang.Expr]DataLoc{}
			}
			si.RecordDataLocs[e] = o
		}
	}
	return true
}

// userRecord reports whether the probe's records are a syscall's, whose
// pointer fields point into the calling process's memory, as bpftrace
// reads them.
func (c *checker) userRecord() bool {
	for _, si := range c.ctx.Specs {
		if si.Record != nil && si.Category == "syscalls" {
			return true
		}
	}
	return false
}

// isFormatField reports whether name is a format field of one of the
// probe's tracepoints, for the hint when a probe reads it beside what only
// the raw arguments give.
func (c *checker) isFormatField(name string) bool {
	for _, si := range c.ctx.Specs {
		if si.Spec.Kind != lang.ProbeTracepoint {
			continue
		}
		if raw := c.rawEventStruct(si.Spec.Name, nil); raw != nil {
			if _, _, ok := FindMember(raw, name); ok {
				return true
			}
		}
	}
	return false
}
