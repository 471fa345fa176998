package check

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// probeContext works out what each spec of a probe provides and intersects
// them: a field is usable in a probe only if every one of its specs has it
// (the specs missing_probes drops aside). pred is the predicate has()
// leaves.
func (c *checker) probeContext(p *lang.Probe, pred lang.Expr) *ProbeInfo {
	pi := &ProbeInfo{Skb: true, Reason: true, Func: true, Entry: true, Prog: true, Retval: types.Bad}
	use := c.scanArgs(p, pred)
	first := types.Bad // the first spec's return type
	specs, missed := c.expandSpecs(c.liveSpecs(p))
	for i, s := range specs {
		si := &SpecInfo{Spec: s, SkbParam: -1, ReasonParam: -1, Unresolved: true}
		if !missed[s] {
			si = c.spec(s, use)
		}
		pi.Specs = append(pi.Specs, si)
		if si.Unresolved {
			// The spec's own error was reported; do not add errors about
			// what it would have provided.
			pi.Unresolved = true
			continue
		}
		if i == 0 {
			pi.Record, pi.DataLocs = si.Record, si.DataLocs
		} else if (si.Record == nil) != (pi.Record == nil) {
			c.errorf(s, "split the probe list", "%s is read by its raw arguments and %s by its format fields", specs[0].Text, s.Text)
		}
		skb, reason, fn, retval, noArgs := c.provides(si)
		if noArgs != "" {
			// SkbParam and ReasonParam index Params: no arguments, no skb
			// or reason from them (a kretprobe's skb argument is gone).
			si.Params, si.SkbParam, si.ReasonParam = nil, -1, -1
			for _, f := range si.Funcs {
				f.Params, f.SkbParam, f.ReasonParam = nil, -1, -1
			}
		}
		pi.Skb = pi.Skb && skb
		pi.Reason = pi.Reason && reason
		pi.Func = pi.Func && fn
		pi.Entry = pi.Entry && si.Spec.Kind == lang.ProbeSkbRet
		pi.Prog = pi.Prog && (si.Spec.Kind == lang.ProbeBpf || si.Spec.Kind == lang.ProbeBpfRet)
		if i == 0 || len(pi.Specs) == 1 {
			pi.Retval, first = retval, retval
			pi.Params, pi.NoArgs = si.Params, noArgs
			continue
		}
		if s.Kind == lang.ProbeSkbRet && specs[0].Kind == lang.ProbeSkbRet {
			// skbret: lists mix return types by design: retval is their
			// common type, or each function's (MixedRetval).
			pi.Retval = commonRetval(pi.Retval, retval)
		} else if retval.Kind != first.Kind || retval.Size != first.Size || retval.Signed != first.Signed {
			if pi.RetvalDiffers == nil && (first.Kind != types.Invalid || retval.Kind != types.Invalid) {
				pi.RetvalDiffers = s
				pi.RetvalWhy = fmt.Sprintf("%s %s, %s %s", specs[0].Text, c.returns(pi.Specs[0]), s.Text, c.returns(si))
			}
			pi.Retval = types.Bad
		}
		pi.Params = commonParams(pi.Params, si.Params)
		if pi.Params == nil && globSpecs(pi) {
			pi.Params = []Param{}
		}
		if pi.Params == nil && pi.NoArgs == "" {
			pi.NoArgs = "the probes of this list have different arguments"
		}
	}
	return pi
}

func commonParams(a, b []Param) []Param {
	var out []Param
	for _, x := range a {
		for _, y := range b {
			if x.Name == y.Name && x.Index == y.Index && x.Type.String() == y.Type.String() {
				out = append(out, x)
			}
		}
	}
	return out
}

func (c *checker) provides(si *SpecInfo) (skb, reason, fn bool, retval types.Type, noArgs string) {
	retval = types.Bad
	switch si.Spec.Kind {
	case lang.ProbeUprobe, lang.ProbeUretprobe:
		return userProvides(si)
	case lang.ProbeBpf:
		return si.SkbParam >= 0, false, false, retval, ""
	case lang.ProbeBpfRet:
		return si.SkbParam >= 0, false, false, bpfVerdict(si), ""
	case lang.ProbeSkb:
		return true, true, true, retval, "skb:" + si.Spec.Target + " matches many functions with different arguments; use kprobe:FN or fentry:FN for args"
	case lang.ProbeSkbRet:
		return true, false, true, c.skbRetType(si.Spec.Target), "skbret:" + si.Spec.Target + " matches many functions with different arguments; use fexit:FN for args"
	case lang.ProbeKprobe, lang.ProbeFentry, lang.ProbeKretprobe, lang.ProbeFexit:
		if len(si.Funcs) == 0 {
			break
		}
		ret := si.Spec.Kind == lang.ProbeKretprobe || si.Spec.Kind == lang.ProbeFexit
		skb, reason, retval = c.globProvides(si, ret)
		if si.Spec.Kind == lang.ProbeKretprobe {
			return false, false, true, retval, "a kretprobe does not see the arguments; use fexit:" + si.Spec.Target
		}
		return skb, reason, true, retval, ""
	}
	// A drop reason is an argument, or where the kernel gives none, the
	// constant a later kernel's drop would give (reasonStandsIn).
	reason = si.ReasonParam >= 0 || c.reasonStandsIn(si)
	switch si.Spec.Kind {
	case lang.ProbeKprobe, lang.ProbeFentry:
		return si.SkbParam >= 0, reason, true, retval, ""
	case lang.ProbeFexit:
		return si.SkbParam >= 0, reason, true, c.retType(si), ""
	case lang.ProbeKretprobe:
		return false, false, true, c.retType(si), "a kretprobe does not see the arguments; use fexit:" + si.Spec.Target
	case lang.ProbeTracepoint:
		if si.Record != nil {
			return false, reason, false, retval, ""
		}
		return si.SkbParam >= 0, reason, false, retval, ""
	case lang.ProbeBegin, lang.ProbeEnd:
		return false, false, false, retval, string(si.Spec.Kind) + " has no arguments"
	case lang.ProbeInterval:
		return false, false, false, retval, "interval probes have no arguments"
	case lang.ProbeSelf:
		return false, false, false, retval, "self:signal probes have no arguments"
	case lang.ProbeTest, lang.ProbeBench:
		return false, false, false, retval, string(si.Spec.Kind) + " probes have no arguments"
	case lang.ProbeProfile:
		return false, false, false, retval, "profile probes have no arguments"
	}
	return false, false, false, retval, "unknown probe"
}

// returns says what a spec returns, for the error where the specs of a
// list differ: "returns int", "has no return value".
func (c *checker) returns(si *SpecInfo) string {
	switch si.Spec.Kind {
	case lang.ProbeFexit, lang.ProbeKretprobe, lang.ProbeUretprobe:
		if si.Proto == nil {
			return "returns a 64-bit value"
		}
		return "returns " + types.CName(si.Proto.Return)
	case lang.ProbeSkbRet:
		return "returns what each function it matches returns"
	}
	return "has no return value"
}

func (c *checker) retType(si *SpecInfo) types.Type {
	if si.Proto == nil {
		return types.S64
	}
	t, ok := c.fromBTF(si.Proto.Return)
	if !ok || !t.IsScalar() {
		return types.S64
	}
	return t
}

func (c *checker) spec(s *lang.ProbeSpec, use argUse) *SpecInfo {
	si := &SpecInfo{Spec: s, SkbParam: -1, ReasonParam: -1}
	if s.Kind == "" {
		// The parser already reported this spec.
		si.Unresolved = true
		return si
	}
	switch s.Kind {
	case lang.ProbeSkb, lang.ProbeSkbRet:
		if _, err := path.Match(s.Target, ""); err != nil {
			c.errorf(s, "a glob has * (any run), ? (one character) and [a-z] (a class), e.g. skb:ip_*", "invalid pattern %q: %v", s.Target, err)
		}
	case lang.ProbeUprobe, lang.ProbeUretprobe:
		c.uprobe(si)
		return si
	case lang.ProbeBpf, lang.ProbeBpfRet:
		c.bpfProg(si)
		return si
	case lang.ProbeKprobe, lang.ProbeKretprobe, lang.ProbeFentry, lang.ProbeFexit:
		if IsFuncGlob(s.Target) {
			c.funcGlob(si)
			return si
		}
		var fn *btf.Func
		err := c.opts.BTF.TypeByName(s.Target, &fn)
		if err != nil {
			hint := ""
			if errors.Is(err, btf.ErrNotFound) {
				hint = missingFuncHint(s.Target)
				if m := c.suggestBTF(s.Target, "func"); m != "" {
					hint = "did you mean " + m + "?"
				}
				if h := c.cloneHint(string(s.Kind), s.Target); h != "" {
					hint = h
				}
			}
			c.errorf(s, hint, "unknown kernel function %q", s.Target)
			si.Unresolved = true
			return si
		}
		proto, _ := fn.Type.(*btf.FuncProto)
		c.setProto(si, proto, 0)
	case lang.ProbeTracepoint:
		if s.Name == "" {
			return si
		}
		var td *btf.Typedef
		haveRaw := c.opts.BTF.TypeByName("btf_trace_"+s.Name, &td) == nil
		if haveRaw {
			if ptr, _ := btf.UnderlyingType(td.Type).(*btf.Pointer); ptr != nil {
				proto, _ := ptr.Target.(*btf.FuncProto)
				c.setProto(si, c.namedTracepointProto(s.Name, proto), 1)
			}
		}
		if s.Raw {
			if !haveRaw {
				c.errorf(s, "rawtracepoint:NAME names a tracepoint of this kernel, e.g. rawtracepoint:kfree_skb", "no raw tracepoint %s in this kernel's BTF", s.Name)
				si.Unresolved = true
			}
			return si
		}
		if wantsRecord(use, si, haveRaw) {
			if !c.useRecord(si, haveRaw) {
				si.Unresolved = true
			}
			return si
		}
		if c.opts.TracepointExists != nil && !c.opts.TracepointExists(s.Category, s.Name) {
			c.errorf(s, "", "no tracepoint %s in category %q", s.Name, s.Category)
			si.Unresolved = true
			return si
		}
	}
	return si
}

// setProto records a prototype's parameters, skipping the first `skip`
// (the tracepoint context).
func (c *checker) setProto(si *SpecInfo, proto *btf.FuncProto, skip int) {
	if proto == nil {
		return
	}
	si.Proto = proto
	for i, p := range proto.Params {
		if i < skip {
			continue
		}
		t, _ := c.fromBTF(p.Type)
		name := p.Name
		if name == "" {
			name = fmt.Sprintf("arg%d", i-skip)
		}
		si.Params = append(si.Params, Param{Name: name, Index: i - skip, Type: t, BTF: p.Type})
		if IsSkbPtr(p.Type) && si.SkbParam < 0 {
			si.SkbParam = len(si.Params) - 1
		}
		if e, ok := btf.UnderlyingType(p.Type).(*btf.Enum); ok && e.Name == "skb_drop_reason" {
			si.ReasonParam = len(si.Params) - 1
		}
	}
}

// IsSkbPtr reports whether a BTF type is struct sk_buff *.
func IsSkbPtr(t btf.Type) bool {
	p, ok := btf.UnderlyingType(t).(*btf.Pointer)
	if !ok {
		return false
	}
	s, ok := btf.UnderlyingType(p.Target).(*btf.Struct)
	return ok && s.Name == "sk_buff"
}

// suggestBTF finds the closest function or tracepoint name.
func (c *checker) suggestBTF(name, what string) string {
	idx := indexOf(c.opts.BTF)
	if what == "func" {
		return lang.Suggest(name, idx.funcs)
	}
	return lang.Suggest(name, idx.tracepoints)
}

// namedTracepointProto finds the parameter names of a tracepoint. The
// btf_trace_NAME prototype has none; the kernel's __bpf_trace_CLASS function
// has them, and CLASS is the event's name or the event class it belongs to,
// found by matching parameter types.
func (c *checker) namedTracepointProto(name string, proto *btf.FuncProto) *btf.FuncProto {
	if proto == nil {
		return nil
	}
	var fn *btf.Func
	if err := c.opts.BTF.TypeByName("__bpf_trace_"+name, &fn); err == nil {
		if p, ok := fn.Type.(*btf.FuncProto); ok && sameParamTypes(p, proto) {
			return plainNames(p)
		}
	}
	for _, p := range indexOf(c.opts.BTF).classProtos {
		if sameParamTypes(p, proto) {
			return plainNames(p)
		}
	}
	// No such function in this BTF (5.10's pahole left the notrace
	// functions out): the packet tracepoints' names from their TP_PROTO.
	if names := stdlib.TracepointArgs(name, len(proto.Params)-1); names != nil {
		cp := *proto
		cp.Params = slices.Clone(proto.Params)
		for i, n := range names {
			cp.Params[i+1].Name = n
		}
		return &cp
	}
	return proto
}

// plainNames drops the verifier annotations of parameter names: the
// kernel writes a tracepoint's possibly-NULL skb as skb__nullable, a user
// writes args.skb.
func plainNames(p *btf.FuncProto) *btf.FuncProto {
	cp := *p
	cp.Params = make([]btf.FuncParam, len(p.Params))
	for i, fp := range p.Params {
		fp.Name = strings.TrimSuffix(fp.Name, "__nullable")
		cp.Params[i] = fp
	}
	return &cp
}

func sameParamTypes(a, b *btf.FuncProto) bool {
	if len(a.Params) != len(b.Params) {
		return false
	}
	for i := 1; i < len(a.Params); i++ {
		if a.Params[i].Type != b.Params[i].Type {
			return false
		}
	}
	return true
}
