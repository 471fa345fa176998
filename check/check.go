package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// Options configure a check.
type Options struct {
	// BTF is the kernel's type information. It is required: skb fields and
	// probe arguments are resolved against it.
	BTF BTF
	// Params are the positional parameters $1, $2, ...
	Params []string
	// TracepointExists, when set, says whether a tracepoint exists; it lets
	// the checker reject a misspelt category. Without it only the name is
	// checked, against BTF.
	TracepointExists func(category, name string) bool
	// TracepointFormat, when set, returns a tracepoint's tracefs category
	// (resolving a * category) and its format file. It is asked only for
	// tracepoints a script reads by their format fields, as bpftrace does.
	TracepointFormat func(category, name string) (string, string, error)
	// MatchFuncs, when set, lists the traceable kernel functions whose
	// names match a glob, for kprobe:GLOB and the like. Without it, or
	// where it fails, every function BTF describes is a candidate.
	MatchFuncs func(glob string) ([]string, error)
	// MatchTracepoints, when set, lists "CATEGORY:NAME" of the tracepoints
	// a tracepoint glob's two globs match (tracefs's events). Without it the
	// raw tracepoints of BTF are listed.
	MatchTracepoints func(category, name string) ([]string, error)
	// BPFProgs, when set, lists the loaded BPF packet programs that bpf:
	// and bpfret: probes attach to; without it those probes are errors.
	BPFProgs func() ([]BPFProg, error)
	// KfuncAllowed, when set, says whether programs of a type (as
	// kernel.KfuncProgTypes names them) may call a kfunc: kfunc_allowed
	// and comm(pid) ask it. Without it no kfunc is.
	KfuncAllowed func(progType, kfunc string) bool
}

// Check resolves every name of a script and computes every expression's type.
// All errors are returned together as *lang.Diagnostics. The script is not
// changed; to compile it, Prune it first.
func Check(s *lang.Script, opts Options) (*Info, error) {
	info, again, err := check(s, opts, nil)
	if again != nil {
		// A for loop over a map types its variable by the map's keys and
		// value; a second pass knows them as the whole script has them,
		// where a loop comes before an assignment that adds or widens.
		info, _, err = check(s, opts, again)
	}
	return info, err
}

// check is a pass of Check. A pass given the maps a first pass found
// (mapHints) types map loops by them; the first returns them where the
// script has a map loop.
func check(s *lang.Script, opts Options, mapHints map[string]*MapInfo) (*Info, map[string]*MapInfo, error) {
	c := &checker{
		mapHints:       mapHints,
		src:            s.Src,
		memberFields:   map[string]*stdlib.Field{},
		opts:           opts,
		retvalReported: map[*ProbeInfo]bool{},
		diags:          &lang.Diagnostics{Src: s.Src},
		info: &Info{
			Types:      map[lang.Expr]types.Type{},
			Fields:     map[*lang.Ident]*stdlib.Field{},
			Consts:     map[lang.Expr]Const{},
			Calls:      map[*lang.CallExpr]*stdlib.Func{},
			Members:    map[*lang.FieldExpr]Member{},
			ArgRefs:    map[lang.Expr]int{},
			Maps:       map[string]*MapInfo{},
			Probes:     map[*lang.Probe]*ProbeInfo{},
			Vars:       map[*lang.Probe]map[string]types.Type{},
			SkbPaths:   map[*stdlib.Field][]Member{},
			Formats:    map[*lang.CallExpr][]stdlib.Verb{},
			DataLocs:   map[lang.Expr]DataLoc{},
			Pcap:       map[*lang.CallExpr]lang.Expr{},
			Capture:    map[*lang.CallExpr][]lang.Expr{},
			FuncNames:  map[*lang.BinaryExpr]string{},
			ProbeNames: map[*lang.BinaryExpr]string{},
			TupleElems: map[*lang.FieldExpr]int{},
			TupleIdx:   map[*lang.IndexExpr]*lang.FieldExpr{},
			Loops:      map[*lang.ForStmt]*LoopInfo{},
			Has:        map[*lang.CallExpr]bool{},
			Missing:    map[*lang.ProbeSpec]bool{},
			src:        s.Src,
		},
	}
	if opts.BTF == nil {
		return nil, nil, fmt.Errorf("check: no BTF given")
	}
	if err := opts.BTF.TypeByName("sk_buff", &c.info.SkbType); err != nil {
		return nil, nil, fmt.Errorf("kernel BTF has no struct sk_buff: %w", err)
	}
	c.config(s.Config)
	c.defineTypes(s.Types)
	for _, p := range c.liveProbes(c.dropMissing(s.Probes)) {
		c.probe(p.probe, p.pred)
	}
	c.finishMaps()
	c.mapDecls(s.MapDecls)
	c.checkScalarDeletes()
	c.missingParams(s)
	if c.sawMapLoop && mapHints == nil {
		return c.info, c.info.Maps, c.diags.Err()
	}
	return c.info, nil, c.diags.Err()
}

type checker struct {
	// tseries are the first tseries() call of each map (tseries.go).
	tseries map[string]*lang.CallExpr
	// dead counts the if branches being checked that a constant
	// condition leaves out: fail() there is not reached.
	dead  int
	src   *lang.Source
	opts  Options
	diags *lang.Diagnostics
	info  *Info

	// defined are the C types and enumerators the script defines.
	defined scriptTypes
	// scalarDeletes are the delete(@m) calls without a key: valid where
	// @m has no keys (mapdecl.go's scalarDeletes checks them).
	scalarDeletes []*lang.CallExpr

	// per probe
	ctx  *ProbeInfo
	vars map[string]types.Type
	// declared are the variables of `let`: pending until their first
	// assignment gives them a type (let $x;), or fixed to the type the
	// declaration names (let $x: uint16).
	declared map[string]declared
	// mapReads are reads of maps, checked once all assignments are known.
	mapReads []*lang.MapExpr
	// memberFields are the fields made for bare sk_buff member names.
	memberFields map[string]*stdlib.Field
	// missing are the uses of a positional parameter that was not given,
	// in source order; those later read as strings ("") are forgiven.
	missing []*lang.PosParam
	// asString are the parameters read as strings.
	asString map[*lang.PosParam]bool
	// retvalReported are the probes whose differing retval was reported
	// (once per probe, not once per use).
	retvalReported map[*ProbeInfo]bool
	// reasonEnum is enum skb_drop_reason, the kernel's or, where it has
	// none, a stand-in (reasonStandIn): see dropReasonEnum.
	reasonEnum    *btf.Enum
	reasonStandIn bool
	// loops are the for loops whose bodies are being checked, innermost
	// last; sawMapLoop says the script has a loop over a map, typed by
	// mapHints on a second pass.
	loops      []loopScope
	sawMapLoop bool
	mapHints   map[string]*MapInfo
	// dropped are the probes missing_probes dropped whole.
	dropped []*lang.Probe
	// probeNode is the probe being checked.
	probeNode *lang.Probe
}

func (c *checker) errorf(n lang.Node, hint, format string, args ...any) {
	c.diags.Add(n.Span(), hint, format, args...)
}

// ctxErrorf reports that the probe lacks something, unless the probe's specs
// could not be resolved, in which case that error already says why.
func (c *checker) ctxErrorf(n lang.Node, hint, format string, args ...any) {
	if c.ctx != nil && c.ctx.Unresolved {
		return
	}
	c.errorf(n, hint, format, args...)
}

// note records, once, something the user should know about how the script
// runs on this kernel; the caller prints it.
func (c *checker) note(msg string) {
	if !slices.Contains(c.info.Notes, msg) {
		c.info.Notes = append(c.info.Notes, msg)
	}
}

func (c *checker) text(n lang.Node) string { return c.src.Slice(n.Span()) }

// probe checks a probe whose predicate has() leaves as pred (nil: none).
func (c *checker) probe(p *lang.Probe, pred lang.Expr) {
	c.probeNode = p
	c.ctx = c.probeContext(p, pred)
	c.info.Probes[p] = c.ctx
	c.vars = map[string]types.Type{}
	c.declared = map[string]declared{}
	c.info.Vars[p] = c.vars
	if pred != nil {
		t := c.expr(pred)
		c.wantCond(pred, t, "a predicate")
	}
	c.block(p.Body)
}

func (c *checker) wantCond(e lang.Expr, t types.Type, what string) {
	if t.Kind == types.Invalid || t.IsScalar() {
		return
	}
	hint := ""
	switch t.Kind {
	case types.String:
		hint = `compare it: dev == "eth0"`
	case types.Addr:
		hint = "compare it: saddr == 10.0.0.1, or saddr in 10.0.0.0/8"
	}
	c.errorf(e, hint, "%s must be an integer or a pointer, got %s", what, t)
}

// param returns positional parameter n, or "" when it was not given.
func (c *checker) param(n int) (string, bool) {
	if n >= 1 && n <= len(c.opts.Params) {
		return c.opts.Params[n-1], true
	}
	return "", false
}

// missingParams reports each parameter used as a number but not given: a
// tool run without its argument fails here, before anything attaches. A
// bpftrace program (no .st file, no packet probe or word) reads it as 0,
// as bpftrace does.
func (c *checker) missingParams(s *lang.Script) {
	if len(c.missing) > 0 && c.bpftraceProgram(s) {
		return
	}
	for _, p := range c.missing {
		if c.asString[p] {
			continue
		}
		how := "skbtrace " + c.src.Name + " ARG..."
		if c.src.Name == "cmdline" {
			how = "skbtrace -e 'PROGRAM' ARG..."
		}
		c.errorf(p, fmt.Sprintf("give the script's arguments after it: %s (%d given)", how, len(c.opts.Params)),
			"$%d is not given", p.N)
	}
}

// bpftraceProgram reports whether a script is one bpftrace could run: not
// a .st file (skbtrace's scripts and tools), and neither a packet probe
// (skb:, skbret:, bpf:, bpfret:) nor a packet word in it (as
// cmd/skbtrace's output rule says).
func (c *checker) bpftraceProgram(s *lang.Script) bool {
	if s.Src == nil || strings.HasSuffix(s.Src.Name, ".st") {
		return false
	}
	for _, p := range s.Probes {
		for _, sp := range p.Specs {
			switch sp.Kind {
			case lang.ProbeSkb, lang.ProbeSkbRet, lang.ProbeBpf, lang.ProbeBpfRet:
				return false
			}
		}
	}
	for _, f := range c.info.Fields {
		if f.Needs&(stdlib.NeedSkb|stdlib.NeedReason|stdlib.NeedEntry|stdlib.NeedProg) != 0 {
			return false
		}
	}
	return true
}

func (c *checker) posParam(e *lang.PosParam) types.Type {
	if e.Count {
		c.info.Consts[e] = Const{Int: uint64(len(c.opts.Params))}
		return types.U64
	}
	v, _ := c.param(e.N)
	if n, err := strconv.ParseInt(v, 0, 64); err == nil {
		c.info.Consts[e] = Const{Int: uint64(n)}
		return types.S64
	}
	if u, err := strconv.ParseUint(v, 0, 64); err == nil {
		c.info.Consts[e] = Const{Int: u}
		return types.U64
	}
	if v == "" {
		// Where a string is wanted, a missing parameter is "" (a tool's
		// optional flag: `$1 == "-c"`); as a number it is an error,
		// reported once the whole script is checked.
		if _, given := c.param(e.N); !given {
			c.missing = append(c.missing, e)
		}
		c.info.Consts[e] = Const{}
		return types.S64
	}
	c.info.Consts[e] = Const{Str: v, IsStr: true}
	return types.Str(max(len(v)+1, 16))
}
