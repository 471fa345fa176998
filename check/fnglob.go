package check

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
)

// IsFuncGlob reports whether a kprobe, kretprobe, fentry or fexit target is
// a glob (kprobe:tcp_*) rather than one function's name.
func IsFuncGlob(target string) bool { return strings.ContainsAny(target, "*?[") }

// funcGlob resolves a function probe's glob to the traceable functions it
// matches, each with its own prototype in si.Funcs. The spec's Params are
// the arguments every one of them has alike (name, position and type);
// the others are rejected where the script reads them (argMismatch).
func (c *checker) funcGlob(si *SpecInfo) {
	s := si.Spec
	if _, err := path.Match(s.Target, ""); err != nil {
		c.errorf(s, "a glob has * (any run), ? (one character) and [a-z] (a class), e.g. kprobe:tcp_*", "invalid pattern %q: %v", s.Target, err)
		si.Unresolved = true
		return
	}
	c.eachGlobFunc(s.Target, func(n string, proto *btf.FuncProto) bool {
		fsi := &SpecInfo{Spec: s, Func: n, SkbParam: -1, ReasonParam: -1}
		c.setProto(fsi, proto, 0)
		si.Funcs = append(si.Funcs, fsi)
		return true
	})
	if len(si.Funcs) == 0 {
		hint := c.cloneHint(string(s.Kind), s.Target)
		if hint == "" {
			hint = fmt.Sprintf("%s probes attach to the traceable kernel functions that BTF describes: skbtrace -l '%s:*' lists them", s.Kind, s.Kind)
		}
		c.errorf(s, hint, "%s matches no traceable kernel function", s.Text)
		si.Unresolved = true
		return
	}
	si.Params = []Param{}
	for i, f := range si.Funcs {
		if i == 0 {
			si.Params = append(si.Params, f.Params...)
			continue
		}
		si.Params = commonParams(si.Params, f.Params)
	}
	if si.Params == nil {
		si.Params = []Param{} // arguments, none of them common
	}
	si.Proto = nil
}

// eachGlobFunc calls f with each traceable function a glob matches that
// BTF describes, and its prototype, in name order, until f returns false.
func (c *checker) eachGlobFunc(glob string, f func(name string, proto *btf.FuncProto) bool) {
	var names []string
	var err error = errNoMatcher
	if c.opts.MatchFuncs != nil {
		names, err = c.opts.MatchFuncs(glob)
	}
	if err != nil {
		for _, n := range indexOf(c.opts.BTF).funcs {
			if ok, _ := path.Match(glob, n); ok {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		names = slices.Compact(names)
	}
	for _, n := range names {
		var fn *btf.Func
		if c.opts.BTF.TypeByName(n, &fn) != nil {
			continue // a module's function, or one BTF does not describe
		}
		proto, ok := fn.Type.(*btf.FuncProto)
		if !ok {
			continue
		}
		if !f(n, proto) {
			return
		}
	}
}

// globProvides is what a glob spec provides: an skb (or a drop reason)
// where every function it matches takes one, wherever among its arguments;
// the return type where all return the same one, else s64, read per
// function as its own type (0 where a function returns nothing).
func (c *checker) globProvides(si *SpecInfo, ret bool) (skb, reason bool, retval types.Type) {
	skb, reason, retval = true, true, types.Bad
	for i, f := range si.Funcs {
		skb = skb && f.SkbParam >= 0
		reason = reason && (f.ReasonParam >= 0 || c.reasonStandsIn(f))
		if !ret {
			continue
		}
		f.Ret, f.RetVoid = c.retType(f), isVoid(f.Proto.Return)
		switch {
		case i == 0:
			retval = f.Ret
		case f.RetVoid || si.Funcs[0].RetVoid || f.Ret.String() != retval.String():
			retval = types.S64
		}
	}
	if ret && si.Funcs[0].RetVoid {
		retval = types.S64
	}
	return skb, reason, retval
}

func isVoid(t btf.Type) bool {
	_, ok := t.(*btf.Void)
	return ok || t == nil
}

// argMismatch explains why the argument a script reads (by name, or argN
// by index) is not known in a probe whose glob matches functions that do
// not all have it alike; "" where no glob spec is the cause.
func (c *checker) argMismatch(name string, index int) string {
	if c.ctx == nil {
		return ""
	}
	for _, si := range c.ctx.Specs {
		if len(si.Funcs) == 0 {
			continue
		}
		var have, lack *SpecInfo
		var haveP, lackP *Param
		for _, f := range si.Funcs {
			p := findParam(f.Params, name, index)
			switch {
			case p != nil && have == nil:
				have, haveP = f, p
			case p == nil && lack == nil:
				lack = f
			case p != nil && haveP != nil && (p.Index != haveP.Index || p.Type.String() != haveP.Type.String()) && lackP == nil:
				lack, lackP = f, p
			}
		}
		what := name
		if index >= 0 {
			what = fmt.Sprintf("arg%d", index)
		}
		switch {
		case have == nil:
			return fmt.Sprintf("none of the %d functions %s matches has %s", len(si.Funcs), si.Spec.Text, what)
		case lackP != nil:
			return fmt.Sprintf("the %d functions %s matches differ in it: %s has %s, %s has %s",
				len(si.Funcs), si.Spec.Text, have.Func, describeParam(*haveP), lack.Func, describeParam(*lackP))
		case lack != nil:
			return fmt.Sprintf("not every function %s matches has it: %s has %s, %s has not",
				si.Spec.Text, have.Func, describeParam(*haveP), lack.Func)
		}
	}
	return ""
}

var errNoMatcher = errors.New("no list of traceable functions")

// globHint is what to do about an argument the functions of a glob do not
// have alike.
const globHint = "narrow the glob, or split it into probes whose functions agree"

func findParam(ps []Param, name string, index int) *Param {
	for i := range ps {
		if index >= 0 && ps[i].Index == index || index < 0 && ps[i].Name == name {
			return &ps[i]
		}
	}
	return nil
}

func describeParam(p Param) string {
	return strings.ReplaceAll(fmt.Sprintf("%s %s as arg%d", types.CName(p.BTF), p.Name, p.Index), "* ", "*")
}

// globLacks names, for a probe whose glob matches functions of which some
// lack what has(f) looks for (an skb, a drop reason), one that has it and
// one that does not; "" where no glob is the cause.
func (c *checker) globLacks(what string, has func(*SpecInfo) bool) string {
	for _, si := range c.ctx.Specs {
		if isUserKind(si.Spec.Kind) {
			continue
		}
		var yes, no string
		for _, f := range si.Funcs {
			if has(f) && yes == "" {
				yes = f.Func
			} else if !has(f) && no == "" {
				no = f.Func
			}
		}
		switch {
		case no != "" && yes != "":
			return fmt.Sprintf("not every function %s matches takes %s: %s does, %s does not; %s", si.Spec.Text, what, yes, no, globHint)
		case no != "":
			return fmt.Sprintf("no function %s matches takes %s", si.Spec.Text, what)
		}
	}
	return ""
}

// globSpecs reports whether a probe has a kernel function glob among its
// specs.
func globSpecs(pi *ProbeInfo) bool {
	for _, si := range pi.Specs {
		if len(si.Funcs) > 0 && !isUserKind(si.Spec.Kind) {
			return true
		}
	}
	return false
}
