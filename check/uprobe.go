package check

import (
	"fmt"
	goruntime "runtime"
	"strings"

	"github.com/skbtrace/skbtrace/internal/userbin"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// maxUserGlob bounds the functions a uprobe glob attaches to: each is a
// program of its own.
const maxUserGlob = 512

// uprobe resolves a uprobe's or uretprobe's binary (a path, a library name
// such as libc, a command in PATH) and its function, or the functions its
// glob matches, each in si.Funcs. A missing binary or function is an error
// at the spec that names it.
func (c *checker) uprobe(si *SpecInfo) {
	s := si.Spec
	if s.Binary == "" {
		si.Unresolved = true // the parser said why
		return
	}
	path, err := userbin.Resolve(s.Binary, goruntime.GOARCH)
	if err != nil {
		hint := "give the binary's path, e.g. " + string(s.Kind) + ":/usr/bin/bash:readline"
		if strings.HasPrefix(s.Binary, "lib") {
			hint = "install the library, or give its path (ldconfig -p lists the libraries the cache has)"
		}
		c.errorf(s, hint, "%s: %v", s.Text, err)
		si.Unresolved = true
		return
	}
	bin, err := userbin.Open(path)
	if err != nil {
		c.errorf(s, "", "%s: %v", s.Text, err)
		si.Unresolved = true
		return
	}
	where := path
	if path != s.Binary {
		where = s.Binary + " (" + path + ")"
	}
	si.Binary = path
	switch {
	case s.Address != 0:
		fn, ok := bin.At(s.Address)
		if !ok {
			c.errorf(s, "write the address of a function, as nm lists it", "%s: no function of %s holds address %#x", s.Text, where, s.Address)
			si.Unresolved = true
			return
		}
		c.userFunc(si, where, fn, s.Address-fn.Addr)
	case IsFuncGlob(s.Name):
		fns, err := bin.Match(s.Name)
		switch {
		case err != nil:
			c.errorf(s, "a glob has * (any run), ? (one character) and [a-z] (a class), e.g. uprobe:libc:getaddr*", "invalid pattern %q: %v", s.Name, err)
		case len(fns) == 0:
			c.errorf(s, "nm -D "+path+" lists its dynamic symbols", "%s matches no function of %s", s.Text, where)
		case len(fns) > maxUserGlob:
			c.errorf(s, "narrow the glob: each function is a program of its own", "%s matches %d functions of %s, more than %d", s.Text, len(fns), where, maxUserGlob)
		}
		if err != nil || len(fns) == 0 || len(fns) > maxUserGlob {
			si.Unresolved = true
			return
		}
		for _, fn := range fns {
			f := &SpecInfo{Spec: s, SkbParam: -1, ReasonParam: -1}
			f.Binary = path
			c.userFunc(f, where, fn, 0)
			si.Funcs = append(si.Funcs, f)
		}
	default:
		fn, ok := bin.Lookup(s.Name)
		if !ok {
			hint := "nm -D " + path + " lists its dynamic symbols"
			if m := lang.Suggest(s.Name, bin.Names()); m != "" {
				hint = "did you mean " + m + "?"
			}
			c.errorf(s, hint, "%s: %s has no function %s", s.Text, where, s.Name)
			si.Unresolved = true
			return
		}
		if fn.IFunc {
			c.errorf(s, ifuncHint(bin, fn.Name), "%s: %s is an indirect function (IFUNC) of %s: it runs once, when the binary is loaded, to pick the implementation that calls go to", s.Text, fn.Name, where)
			si.Unresolved = true
			return
		}
		c.userFunc(si, where, fn, s.Offset)
	}
}

// userFunc records the function a spec (or one of a glob's) attaches to,
// off bytes into it. A probe must be at an instruction's start, or it
// corrupts the traced program: inside a function that is known on arm64
// (every instruction is 4 bytes) but not on x86-64.
func (c *checker) userFunc(si *SpecInfo, where string, fn userbin.Func, off uint64) {
	s := si.Spec
	switch {
	case off != 0 && fn.Size != 0 && off >= fn.Size:
		c.errorf(s, "", "%s: %s of %s is %d bytes long, and the probe is %d bytes into it", s.Text, fn.Name, where, fn.Size, off)
		si.Unresolved = true
		return
	case off != 0 && goruntime.GOARCH == "arm64" && off%4 != 0:
		c.errorf(s, "arm64 instructions are 4 bytes each: make the offset a multiple of 4", "%s: %d bytes into %s is inside an instruction", s.Text, off, fn.Name)
		si.Unresolved = true
		return
	case off != 0 && goruntime.GOARCH != "arm64":
		c.errorf(s, "probe the function's entry: "+string(s.Kind)+":"+s.Binary+":"+fn.Name,
			"%s: skbtrace cannot check that %d bytes into %s is an instruction's start on %s (a uprobe inside an instruction corrupts the traced program)", s.Text, off, fn.Name, goruntime.GOARCH)
		si.Unresolved = true
		return
	}
	si.Func, si.UserOffset, si.FileOffset = fn.Name, off, fn.Offset+off
}

// ifuncHint names the implementations an indirect function may pick, by
// glibc's naming (strlen: __strlen_avx2, __strlen_sse2...).
func ifuncHint(bin *userbin.Binary, name string) string {
	var impls []string
	for _, n := range bin.Names() {
		if strings.HasPrefix(n, "__"+name+"_") {
			impls = append(impls, n)
		}
	}
	if len(impls) == 0 {
		return "probe a function that calls it: the implementations it picks are local symbols, which this binary's symbol tables do not list"
	}
	if len(impls) > 4 {
		impls = append(impls[:4], "...")
	}
	return "probe the implementation it picks instead: " + strings.Join(impls, ", ")
}

// userProvides is what a uprobe or uretprobe gives a probe: the traced
// function (func), arg0..argN from the registers at its entry, retval at
// its return; no skb, no typed arguments (user space has no BTF here).
func userProvides(si *SpecInfo) (skb, reason, fn bool, retval types.Type, noArgs string) {
	if si.Spec.Kind == lang.ProbeUretprobe {
		return false, false, true, types.U64, "a uretprobe does not see the arguments: keep them in a map at the uprobe (@arg[tid] = arg0) and read it here"
	}
	return false, false, true, types.Bad, "a uprobe's arguments have no names or types (skbtrace reads no debug info): read arg0..arg5"
}

// isUserKind reports whether a probe kind traces user space.
func isUserKind(k lang.ProbeKind) bool { return k == lang.ProbeUprobe || k == lang.ProbeUretprobe }

// userContext says whether the probe's specs trace user space: all of
// them, or some (a list that mixes uprobes with kernel probes).
func (c *checker) userContext() (all, some bool) {
	if c.ctx == nil || len(c.ctx.Specs) == 0 {
		return false, false
	}
	all = true
	for _, si := range c.ctx.Specs {
		u := isUserKind(si.Spec.Kind)
		all, some = all && u, some || u
	}
	return all, some
}

// userFuncType is func's type in a probe: in uprobes the function's name
// (known when the program is compiled, printed as probe is), elsewhere
// the kernel address t; a list that mixes the two has none.
func (c *checker) userFuncType(e *lang.Ident, t types.Type) types.Type {
	all, some := c.userContext()
	switch {
	case all:
		return types.Type{Kind: types.Int, Size: 8, Fmt: types.FmtProbe}
	case some:
		c.ctxErrorf(e, "split the probe list into its uprobes and its kernel probes", "func is a user-space function's name in uprobes and a kernel address elsewhere: this list has both")
		return types.Bad
	}
	return t
}

// userArg rejects arg0..argN in a uretprobe, whose registers hold the
// return value, not the arguments; it reports whether it did.
func (c *checker) userArg(e *lang.Ident) bool {
	for _, si := range c.ctx.Specs {
		if si.Spec.Kind == lang.ProbeUretprobe {
			c.errorf(e, "keep the argument in a map at the uprobe (@arg[tid] = "+e.Name+") and read it here", "%s is not known in a uretprobe: %s is its return", e.Name, si.Spec.Text)
			return true
		}
	}
	return false
}

// UserProbeName is, for a uprobe or uretprobe spec on one function, the
// probe's name as bpftrace prints it: uprobe:BINARY:FUNC with the binary
// found, +OFFSET where the probe is inside the function; "" for other
// specs.
func (si *SpecInfo) UserProbeName() string {
	if !isUserKind(si.Spec.Kind) || si.Func == "" {
		return ""
	}
	name := fmt.Sprintf("%s:%s:%s", si.Spec.Kind, si.Binary, si.Func)
	if si.UserOffset != 0 {
		name += fmt.Sprintf("+%d", si.UserOffset)
	}
	return name
}

// describeUserSpec says, for a uprobe or uretprobe spec, the binary and
// the function (or how many, and the first, a glob matches) it attaches
// to; "" for other specs.
func (info *Info) describeUserSpec(s *lang.ProbeSpec) string {
	if !isUserKind(s.Kind) {
		return ""
	}
	for _, p := range info.Probes {
		for _, si := range p.Specs {
			switch {
			case si.Spec != s || si.Unresolved:
			case len(si.Funcs) > 0:
				return fmt.Sprintf("%s: %d function(s), %s first", si.Binary, len(si.Funcs), si.Funcs[0].Func)
			default:
				return fmt.Sprintf("%s: %s+%d", si.Binary, si.Func, si.UserOffset)
			}
		}
	}
	return ""
}

// userSpecMissing reports whether a uprobe's or uretprobe's binary or
// function is missing here, and says what is, for missing_probes: what it
// calls missing is what uprobe reports as not found.
func userSpecMissing(s *lang.ProbeSpec) (string, bool) {
	if s.Binary == "" {
		return "", false
	}
	path, err := userbin.Resolve(s.Binary, goruntime.GOARCH)
	if err != nil {
		return err.Error(), true
	}
	bin, err := userbin.Open(path)
	if err != nil {
		return "", false
	}
	switch {
	case s.Address != 0:
		_, ok := bin.At(s.Address)
		return fmt.Sprintf("no function of %s holds address %#x", path, s.Address), !ok
	case IsFuncGlob(s.Name):
		fns, err := bin.Match(s.Name)
		return fmt.Sprintf("no function of %s matches %s", path, s.Name), err == nil && len(fns) == 0
	}
	_, ok := bin.Lookup(s.Name)
	return fmt.Sprintf("%s has no function %s", path, s.Name), !ok
}
