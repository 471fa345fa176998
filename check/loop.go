package check

import (
	"fmt"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// bpftrace's for loops. Over a map, the body runs for each element, its
// variable the tuple (key, value) (((key1, key2), value) for a map of two
// keys), as bpftrace 0.21 and later have it: a function the kernel calls
// for each element (bpf_for_each_map_elem, Linux 5.13). Over a range,
// start..end (bpftrace 0.24), the body runs for start, start+1, ...
// end-1: in the program itself where both ends are constants at most
// InlineRange apart (the verifier walks each turn, Linux 5.3), else as a
// function bpf_loop calls (Linux 5.17).
//
// A function the kernel calls has no probe context: it reads and writes
// the probe's variables (copied in and out, as bpftrace 0.22 shares them
// through the callback's context), but not what the context holds (the
// skb, args, retval, func, kstack...), which bpftrace refuses in a loop's
// body too.

// InlineRange is the most turns a range loop with constant ends runs in
// the program itself, walked by the verifier turn by turn; a longer or
// variable range runs as a bpf_loop callback.
const InlineRange = 1024

// LoopInfo says how a for loop runs.
type LoopInfo struct {
	// Callback says the body is a function the kernel calls: a loop over
	// a map (bpf_for_each_map_elem) or over a range that is not constant
	// or is longer than InlineRange (bpf_loop).
	Callback bool
	// Start and Count are a constant range's first value and number of
	// turns, where it is not a callback.
	Start, Count int64
}

// loopScope is a loop whose body is being checked: a for loop (stmt),
// or a while loop (stmt nil), which runs in the program.
type loopScope struct {
	stmt *lang.ForStmt
	info *LoopInfo
}

func (c *checker) forStmt(s *lang.ForStmt) {
	name := s.Var.Name
	if _, ok := c.vars[name]; ok || c.declared[name] != declNone || c.inLoopVar(name) {
		c.errorf(s.Var, "name the loop's variable otherwise: for ($kv : ...)", "the loop's variable $%s is already a variable here", name)
	}
	li := &LoopInfo{Callback: true}
	var vt types.Type
	if s.Map != nil {
		vt = c.mapLoopVar(s)
	} else {
		vt = c.rangeLoop(s, li)
	}
	c.info.Loops[s] = li
	c.info.Types[s.Var] = vt
	c.loops = append(c.loops, loopScope{stmt: s, info: li})
	old, had := c.vars[name]
	c.vars[name] = vt
	c.block(s.Body)
	c.loops = c.loops[:len(c.loops)-1]
	if had {
		c.vars[name] = old
	} else {
		delete(c.vars, name)
	}
}

// inLoopVar reports whether name is the variable of a loop being checked.
func (c *checker) inLoopVar(name string) bool {
	for _, l := range c.loops {
		if l.stmt != nil && l.stmt.Var.Name == name {
			return true
		}
	}
	return false
}

// whileStmt checks bpftrace's while loop: a condition, a body where break
// and continue go to it. The verifier must see it end (Linux 5.3).
func (c *checker) whileStmt(s *lang.WhileStmt) {
	c.wantCond(s.Cond, c.expr(s.Cond), "a while condition")
	c.endlessWhile(s)
	c.loops = append(c.loops, loopScope{info: &LoopInfo{}})
	c.block(s.Body)
	c.loops = c.loops[:len(c.loops)-1]
}

// MaxUnroll is the most times unroll repeats its block, as bpftrace has it.
const MaxUnroll = 100

// unroll checks bpftrace's unroll(n): n a constant from 1 to MaxUnroll.
func (c *checker) unroll(s *lang.UnrollStmt) {
	t := c.expr(s.Count)
	n, ok := c.constInt(s.Count)
	switch {
	case t.Kind == types.Invalid:
	case !ok || !t.IsInt():
		c.errorf(s.Count, "unroll repeats its block a constant number of times: unroll(3); for a count known as the probe runs, for ($i : 0..$n)", "unroll's count must be a constant integer")
	case n < 1:
		c.errorf(s.Count, "a block run no times is no block: drop it", "unroll's count must be 1 to %d, not %d", MaxUnroll, n)
	case n > MaxUnroll:
		c.errorf(s.Count, fmt.Sprintf("for more turns, loop: for ($i : 0..%d)", n), "unroll's count must be 1 to %d, not %d", MaxUnroll, n)
	}
	c.block(s.Body)
}

// rangeLoop checks a range's ends and decides how the loop runs; the
// variable is an int64, as the ends are.
func (c *checker) rangeLoop(s *lang.ForStmt, li *LoopInfo) types.Type {
	start, end := c.expr(s.Start), c.expr(s.End)
	for _, e := range []struct {
		x lang.Expr
		t types.Type
	}{{s.Start, start}, {s.End, end}} {
		if e.t.Kind != types.Invalid && !e.t.IsInt() {
			c.errorf(e.x, "a range's ends are integers: for ($i : 0..10)", "a range's end cannot be %s", e.t)
		}
	}
	a, ok1 := c.constInt(s.Start)
	b, ok2 := c.constInt(s.End)
	if ok1 && ok2 && b-a <= InlineRange {
		li.Callback, li.Start, li.Count = false, a, max(b-a, 0)
	}
	return types.S64
}

// mapLoopVar types a map loop's variable, (key, value), from the map's
// keys and value: as the map is where the script assigns it, or, on the
// second pass, as the whole script assigns it.
func (c *checker) mapLoopVar(s *lang.ForStmt) types.Type {
	m := s.Map
	c.info.Types[m] = types.Type{Kind: types.MapRef}
	c.mapRef(m)
	c.sawMapLoop = true
	mi := c.mapHints[m.Name]
	if mi == nil {
		mi = c.info.Maps[m.Name]
	}
	if mi == nil || !mi.Assigned {
		// Not assigned yet on the first pass (a later probe assigns it),
		// or not at all (finishMaps says so).
		return types.Bad
	}
	if len(mi.Keys) == 0 {
		c.errorf(m, "a loop iterates over a map's elements by key; "+mapName(m.Name)+" is one value: read it as "+mapName(m.Name),
			"%s has no keys, and cannot be iterated over", mapName(m.Name))
		return types.Bad
	}
	value := mi.Value
	if value.Kind == types.Agg {
		value = readType(value)
		if value.Kind == types.Invalid {
			c.errorf(m, "bpftrace iterates over maps of values and of count(), sum(), min(), max() and avg(); print a histogram or stats with print("+mapName(m.Name)+")",
				"a for loop cannot iterate over %s, a %s map", mapName(m.Name), mi.Value)
			return types.Bad
		}
	}
	key := mi.Keys[0]
	if len(mi.Keys) > 1 {
		key = types.NewTuple(append([]types.Type(nil), mi.Keys...), nil)
	}
	return types.NewTuple([]types.Type{key, value}, nil)
}

// inCallback reports whether the statement being checked runs in a
// function the kernel calls (a loop body), and returns the loop.
func (c *checker) inCallback() (*lang.ForStmt, bool) {
	for i := len(c.loops) - 1; i >= 0; i-- {
		if c.loops[i].info.Callback {
			return c.loops[i].stmt, true
		}
	}
	return nil, false
}

// callbackUse reports an expression a loop body run by the kernel cannot
// evaluate: it needs the probe's context, which such a function has not.
func (c *checker) callbackUse(e lang.Expr) {
	loop, ok := c.inCallback()
	if !ok {
		return
	}
	what := ""
	switch e := e.(type) {
	case *lang.Ident:
		if f := c.info.Fields[e]; f != nil && needsContext(f) {
			what = e.Name
		} else if _, ok := c.info.ArgRefs[e]; ok {
			what = e.Name
		}
	case *lang.FieldExpr:
		if id, ok := e.X.(*lang.Ident); ok && id.Name == "args" {
			what = "args." + e.Name
		}
	case *lang.CallExpr:
		switch e.Name {
		case "track", "capture", "pcap", "kstack":
			what = e.Name + "()"
		}
	}
	if what == "" {
		return
	}
	how := "a loop over a map runs its body in a function the kernel calls (bpf_for_each_map_elem)"
	if loop.Map == nil {
		how = "a loop over a range that is not constant, or longer than " + fmt.Sprint(InlineRange) + ", runs its body in a function the kernel calls (bpf_loop)"
	}
	if _, isCall := e.(*lang.CallExpr); isCall {
		c.errorf(e, how+", without the probe's context: call it before or after the loop", "%s cannot be called in this loop's body", what)
		return
	}
	c.errorf(e, how+", without the probe's context: read "+what+" into a variable before the loop, $x = "+what+", and use $x in it",
		"%s cannot be read in this loop's body", what)
}

// needsContext reports whether a builtin is read from the probe's context
// or its state (the skb, the arguments, the function, the stack), which a
// loop body the kernel calls has not.
func needsContext(f *stdlib.Field) bool {
	if f.Needs != 0 {
		return true
	}
	switch f.Name {
	case "kstack", stdlib.KstackLen, "probe", "func", "retval", "duration":
		return true
	}
	return false
}

// jump checks break and continue: only in a loop's body. return ends
// the probe's action anywhere.
func (c *checker) jump(s *lang.JumpStmt) {
	if len(c.loops) == 0 && s.Op != "return" {
		c.errorf(s, "break and continue end a loop's turn or the loop; return ends the probe's action", "%s outside a loop", s.Op)
	}
}
