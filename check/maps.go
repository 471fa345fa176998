package check

import (
	"strconv"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

func mapName(name string) string { return "@" + name }

// mapAssign records a map's key and value types, or reports where they
// disagree with an earlier assignment.
func (c *checker) mapAssign(m *lang.MapExpr, keys []types.Type, v types.Type) {
	mi := c.info.Maps[m.Name]
	if mi == nil || !mi.Assigned {
		if mi == nil {
			c.info.MapOrder = append(c.info.MapOrder, m.Name)
		}
		c.info.Maps[m.Name] = &MapInfo{Name: m.Name, Keys: keys, KeyNames: c.keyNames(m, len(keys)), Value: v, First: m.Span(), Assigned: true}
		return
	}
	at := mi.First.Start.String()
	if len(keys) != len(mi.Keys) {
		c.errorf(m, "", "%s has %d keys here but %d at %s", mapName(m.Name), len(keys), len(mi.Keys), at)
		return
	}
	for i, k := range keys {
		if k.Kind == types.Invalid || mi.Keys[i].Kind == types.Invalid {
			continue
		}
		if ptrIntKeys(k, mi.Keys[i]) {
			// bpftrace keys a kprobe's arg0 as the u64 it is, beside
			// an integer (biolatency-kp.bt's @start[0], @start[arg0]).
			mi.Keys[i] = types.U64
			continue
		}
		if t, ok := enumBesidePlain(k, mi.Keys[i]); ok {
			mi.Keys[i] = t
			continue
		}
		if !sameKind(k, mi.Keys[i]) || !sameFormat(k, mi.Keys[i]) {
			c.errorf(keyNode(m, i), "a map keeps one key type: use another map", "key %d of %s is %s here but %s at %s", i+1, mapName(m.Name), describeInt(k), describeInt(mi.Keys[i]), at)
			continue
		}
		mi.Keys[i] = widen(mi.Keys[i], k)
	}
	if !sameKind(v, mi.Value) {
		c.errorf(m, "", "%s holds %s here but %s at %s", mapName(m.Name), v, mi.Value, at)
		return
	}
	if t, ok := enumBesidePlain(v, mi.Value); ok {
		mi.Value = t
		return
	}
	if !sameFormat(v, mi.Value) {
		c.errorf(m, "a map keeps one value type: use another map", "%s holds %s here but %s at %s", mapName(m.Name), describeInt(v), describeInt(mi.Value), at)
		return
	}
	mi.Value = widen(mi.Value, v)
}

// keyNames are the source text of an assigned map element's n keys: each
// key's, a spread tuple literal's elements', or a tuple variable's
// elements as $t.0, $t.1.
func (c *checker) keyNames(m *lang.MapExpr, n int) []string {
	if !c.info.SpreadKey(m) {
		names := make([]string, len(m.Keys))
		for i, k := range m.Keys {
			names[i] = c.text(k)
		}
		return names
	}
	if t, ok := lang.Unparen(m.Keys[0]).(*lang.TupleExpr); ok && len(t.Elems) == n {
		names := make([]string, n)
		for i, e := range t.Elems {
			names[i] = c.text(e)
		}
		return names
	}
	tuple := c.text(m.Keys[0])
	names := make([]string, n)
	for i := range names {
		names[i] = tuple + "." + strconv.Itoa(i)
	}
	return names
}

// mapRead types a read of a map element. The map may be assigned later in
// the script, so reads are verified in finishMaps.
func (c *checker) mapRead(m *lang.MapExpr) types.Type {
	for _, k := range m.Keys {
		c.expr(k)
	}
	c.mapReads = append(c.mapReads, m)
	if mi := c.info.Maps[m.Name]; mi != nil && mi.Assigned {
		return readType(mi.Value)
	}
	return types.U64
}

// readType is what reading a map element yields: the value, or for the
// aggregations that are one number, that number.
func readType(v types.Type) types.Type {
	if v.Kind != types.Agg {
		return v
	}
	switch v.Agg {
	case types.AggCount, types.AggSum, types.AggMin, types.AggMax, types.AggAvg:
		return types.S64
	}
	return types.Bad
}

// mapRef records a map named whole (print(@m), clear(@m)) or an element
// passed to delete.
func (c *checker) mapRef(m *lang.MapExpr) {
	c.mapReads = append(c.mapReads, m)
}

func (c *checker) finishMaps() {
	for _, m := range c.mapReads {
		mi := c.info.Maps[m.Name]
		if mi == nil || !mi.Assigned {
			var names []string
			for n, x := range c.info.Maps {
				if x.Assigned {
					names = append(names, "@"+n)
				}
			}
			if c.droppedAssigns(m.Name) {
				c.errorf(m, "missing_probes dropped the probes that assign it: read it where they are, or keep them",
					"map %s is assigned only in probes this kernel does not have", mapName(m.Name))
				continue
			}
			c.errorf(m, didYouMean("@"+m.Name, names), "map %s is never assigned", mapName(m.Name))
			continue
		}
		t := c.info.Types[m]
		if t.Kind == types.MapRef {
			if n := c.keyCount(m); n > 0 && n != len(mi.Keys) {
				c.errorf(m, "", "%s has %d keys, not %d", mapName(m.Name), len(mi.Keys), n)
			} else if n > 0 {
				c.readKeys(m, mi)
			}
			continue
		}
		if n := c.keyCount(m); n != len(mi.Keys) {
			c.errorf(m, "", "%s has %d keys, not %d", mapName(m.Name), len(mi.Keys), n)
			continue
		}
		c.readKeys(m, mi)
		if rt := readType(mi.Value); rt.Kind == types.Invalid {
			c.errorf(m, "print it with print("+mapName(m.Name)+")", "cannot read a %s map in an expression", mi.Value)
		} else if t.Kind != types.Invalid && !sameKind(t, rt) {
			c.errorf(m, "", "%s holds %s; it is read here as %s", mapName(m.Name), rt, t)
		}
	}
}

// sameFormat reports whether two integers print the same way, so that they
// may share a map's key or value: plain numbers (decimal, hex) mix, but a
// kernel symbol, a time, an enum or a protocol name only with its own kind.
func sameFormat(a, b types.Type) bool {
	if a.Kind != types.Int || b.Kind != types.Int {
		return true
	}
	plain := func(f types.Fmt) bool { return f == types.FmtDec || f == types.FmtHex }
	if a.Fmt != b.Fmt {
		return plain(a.Fmt) && plain(b.Fmt)
	}
	if a.Fmt == types.FmtEnum && a.BTF != nil && b.BTF != nil {
		return a.BTF.TypeName() == b.BTF.TypeName()
	}
	return true
}

// enumBesidePlain reports whether one of two integers is an enum and the
// other a plain number, and gives the plain integer both are then:
// bpftrace prints a map whose keys mix an enumerator and a number (@[ONE],
// @[ONE+1]) as numbers.
func enumBesidePlain(a, b types.Type) (types.Type, bool) {
	if a.Kind != types.Int || b.Kind != types.Int {
		return types.Type{}, false
	}
	if !(a.Fmt == types.FmtEnum && b.Fmt == types.FmtDec) && !(b.Fmt == types.FmtEnum && a.Fmt == types.FmtDec) {
		return types.Type{}, false
	}
	plain := func(t types.Type) types.Type { t.Fmt, t.BTF = types.FmtDec, nil; return t }
	return widen(plain(a), plain(b)), true
}

// fmtNames say what an integer printed as a name is, for messages.
var fmtNames = map[types.Fmt]string{
	types.FmtKsym: "a kernel symbol", types.FmtProbe: "a probe name", types.FmtStrftime: "a time", types.FmtTime: "a time", types.FmtTCPState: "a TCP state",
	types.FmtEtherType: "an ethertype", types.FmtIPProto: "an IP protocol", types.FmtTCPFlags: "TCP flags",
	types.FmtPktType: "a packet type", types.FmtErrno: "an errno", types.FmtHex: "hex",
	types.FmtMAC: "a MAC address",
}

// describeInt names a type, saying how an integer prints where it prints
// as more than a number: "u64 (a kernel symbol)".
func describeInt(t types.Type) string {
	if n, ok := fmtNames[t.Fmt]; ok && t.Kind == types.Int {
		return t.String() + " (" + n + ")"
	}
	return t.String()
}

// ptrIntKeys reports whether one of two key types is a pointer and the
// other a plain integer: one u64 key, as bpftrace's pointers are.
func ptrIntKeys(a, b types.Type) bool {
	plainInt := func(t types.Type) bool { return t.Kind == types.Int && t.Fmt == types.FmtDec }
	return (a.Kind == types.Ptr && plainInt(b)) || (b.Kind == types.Ptr && plainInt(a))
}
