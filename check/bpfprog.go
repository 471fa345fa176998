package check

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/pcapfilter"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// BPFProg is a loaded BPF packet program a bpf: probe may attach to (the
// runtime lists them: Options.BPFProgs).
type BPFProg struct {
	ID   uint32
	Name string // the kernel's name of it, up to 15 characters
	// Type is tc (sched_cls or sched_act), xdp or cgroup_skb.
	Type string
	// Func is its entry function's name in its BTF, which fentry attaches
	// to; "" where it was loaded without BTF.
	Func string
}

// bpfProg resolves a bpf: or bpfret: spec to the loaded programs it
// matches, each a SpecInfo of si.Progs with its context as argument 0: the
// kernel's struct sk_buff * for tc and cgroup_skb (the program's struct
// __sk_buff * is that skb), struct xdp_buff * for xdp. The spec has the
// skb where every program it matches has one.
func (c *checker) bpfProg(si *SpecInfo) {
	s := si.Spec
	if _, err := path.Match(s.Name, ""); err != nil {
		c.errorf(s, "a glob has * (any run), ? (one character) and [a-z] (a class), e.g. bpf:tc:cil_*", "invalid pattern %q: %v", s.Name, err)
		si.Unresolved = true
		return
	}
	if c.opts.BPFProgs == nil {
		c.errorf(s, "", "%s: the loaded BPF programs cannot be listed here", s.Text)
		si.Unresolved = true
		return
	}
	progs, err := c.opts.BPFProgs()
	if err != nil {
		c.errorf(s, "run as root (listing BPF programs needs CAP_SYS_ADMIN)", "%s: list the loaded BPF programs: %v", s.Text, err)
		si.Unresolved = true
		return
	}
	var noBTF []string
	// Under missing_probes = warn or ignore, a spec that matches nothing
	// loaded waits for programs loaded while tracing.
	waits := c.info.Config.MissingProbes != MissingError
	for i := range progs {
		p := &progs[i]
		if !BPFProgMatches(s, p) {
			continue
		}
		if p.Func == "" {
			noBTF = append(noBTF, fmt.Sprintf("%s (id %d)", p.Name, p.ID))
			continue
		}
		psi := &SpecInfo{Spec: s, Func: p.Func, Prog: p, SkbParam: -1, ReasonParam: -1}
		c.setProto(psi, c.bpfProgProto(p.Type), 0)
		si.Progs = append(si.Progs, psi)
	}
	if len(si.Progs) == 0 && waits {
		si.LateType = s.Category
		if s.Category == "*" {
			si.Params = []Param{}
		} else {
			c.setProto(si, c.bpfProgProto(s.Category), 0)
		}
		if c.info.Config.MissingProbes == MissingWarn {
			c.note(fmt.Sprintf("%s: no loaded program matches it yet; it attaches to those loaded while tracing (missing_probes = warn)", s.Text))
		}
		return
	}
	if len(si.Progs) == 0 {
		what := s.Category + " program"
		if s.Category == "*" {
			what = "tc, xdp or cgroup_skb program"
		}
		switch {
		case len(noBTF) > 0:
			c.errorf(s, "fentry attaches to a BPF program through its BTF: load it with BTF (clang -g, or a ProgramSpec with btf.Func metadata)", "%s matches %s, loaded without BTF", s.Text, strings.Join(noBTF, ", "))
		default:
			c.errorf(s, "skbtrace -l 'bpf:*' lists the loaded tc, xdp and cgroup_skb programs", "%s matches no loaded %s", s.Text, what)
		}
		si.Unresolved = true
		return
	}
	first := si.Progs[0]
	si.Proto, si.Params, si.SkbParam = first.Proto, first.Params, first.SkbParam
	si.LateType = first.Prog.Type
	for _, p := range si.Progs[1:] {
		if p.Prog.Type != first.Prog.Type {
			// Mixed types: the context differs, no skb, no args.
			si.Params, si.SkbParam, si.LateType = []Param{}, -1, "*"
			break
		}
	}
}

// LateSpec is the SpecInfo of a program loaded while tracing that a bpf:
// or bpfret: spec matches, of its LateType, for the code generator (as
// each of Progs); nil where the spec does not take it.
func LateSpec(si *SpecInfo, p *BPFProg) *SpecInfo {
	if si.LateType == "" || p.Func == "" || !BPFProgMatches(si.Spec, p) || si.LateType != "*" && si.LateType != p.Type {
		return nil
	}
	return lateSpec(si, p)
}

// LatePlaceholder is the SpecInfo of a program of a spec's LateType that
// is not loaded, for the code generator to find the maps and events a
// program of the spec's needs before any is.
func LatePlaceholder(si *SpecInfo) *SpecInfo {
	if si.LateType == "" {
		return nil
	}
	typ := si.LateType
	if typ == "*" {
		typ = "tc"
	}
	return lateSpec(si, &BPFProg{Name: "placeholder", Type: typ, Func: "placeholder"})
}

func lateSpec(si *SpecInfo, p *BPFProg) *SpecInfo {
	psi := &SpecInfo{Spec: si.Spec, Func: p.Func, Prog: p, SkbParam: -1, ReasonParam: -1, Proto: si.Proto}
	psi.Params = si.Params
	psi.SkbParam = si.SkbParam
	if si.LateType == "*" {
		// Checked without a context: none is read, but the verdict
		// follows it (fexit).
		ctx := btf.FuncParam{Name: "ctx", Type: &btf.Pointer{Target: &btf.Void{}}}
		psi.Proto = &btf.FuncProto{Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}, Params: []btf.FuncParam{ctx}}
		psi.Params = []Param{{Name: ctx.Name, Type: types.U64, BTF: ctx.Type}}
	}
	return psi
}

// BPFProgMatches reports whether a bpf: spec names a loaded program: its
// type (or *), its id where the spec gives one, its name by the glob.
func BPFProgMatches(s *lang.ProbeSpec, p *BPFProg) bool {
	if s.Category != "*" && s.Category != p.Type {
		return false
	}
	if s.ProgID != 0 && s.ProgID != p.ID {
		return false
	}
	ok, _ := path.Match(s.Name, p.Name)
	return ok
}

// bpfProgProto is the prototype fentry sees of a program of a type: its
// context as the kernel's object (the verifier translates the program's
// struct __sk_buff * and struct xdp_md * so), returning int.
func (c *checker) bpfProgProto(typ string) *btf.FuncProto {
	name, param := "sk_buff", "skb"
	if typ == "xdp" {
		name, param = "xdp_buff", "xdp"
	}
	var st *btf.Struct
	if err := c.opts.BTF.TypeByName(name, &st); err != nil {
		return nil
	}
	return &btf.FuncProto{
		Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
		Params: []btf.FuncParam{{Name: param, Type: &btf.Pointer{Target: st}}},
	}
}

// bpfVerdict is the type of a bpfret: probe's retval: the verdict of its
// programs' type, an enum the runtime prints by name (TC_ACT_SHOT,
// XDP_DROP, SK_PASS); an int where the spec's programs are of several
// types.
func bpfVerdict(si *SpecInfo) types.Type {
	if len(si.Progs) == 0 && si.LateType != "*" {
		return BPFVerdict(si.LateType)
	}
	typ := ""
	for i, p := range si.Progs {
		if i > 0 && p.Prog.Type != typ {
			return types.S32
		}
		typ = p.Prog.Type
	}
	return BPFVerdict(typ)
}

// BPFVerdict is the type of the verdict a program of a type (tc, xdp,
// cgroup_skb) returns: an enum printed by name; s32 for another type.
func BPFVerdict(progType string) types.Type {
	en := types.VerdictEnum(progType)
	if en == nil {
		return types.S32
	}
	return types.Type{Kind: types.Int, Size: 4, Signed: true, Fmt: types.FmtEnum, BTF: en}
}

// xdpProbe reports whether every spec of the probe being checked is a
// bpf: or bpfret: probe on XDP programs.
func (c *checker) xdpProbe() bool {
	if c.ctx == nil || len(c.ctx.Specs) == 0 {
		return false
	}
	for _, si := range c.ctx.Specs {
		if si.Spec.Kind != lang.ProbeBpf && si.Spec.Kind != lang.ProbeBpfRet || si.Spec.Category != "xdp" {
			return false
		}
	}
	return true
}

// xdpField is, in a bpf:xdp probe, the field that stands for an skb field
// there (len, dev, ifindex), read from the xdp_buff; nil elsewhere.
func (c *checker) xdpField(name string) *stdlib.Field {
	if f := stdlib.XdpFields[name]; f != nil && c.xdpProbe() {
		return f
	}
	return nil
}

// xdpFrameFuncs are the functions that need an skb elsewhere and read an
// XDP program's frame instead: pcap() and the filter's loads.
var xdpFrameFuncs = []string{"pcap", pcapfilter.LoadFunc, pcapfilter.LenFunc, pcapfilter.DirFunc, pcapfilter.OffsetFunc, pcapfilter.SetOffsetFunc}

// xdpFrameFunc reports whether, in a bpf:xdp probe, a function that needs
// an skb elsewhere reads the frame.
func (c *checker) xdpFrameFunc(name string) bool {
	return c.xdpProbe() && slices.Contains(xdpFrameFuncs, name)
}

// xdpLacksSkb is the hint where a bpf:xdp probe reads another skb field:
// an XDP program runs before there is an skb, and its frame is args.xdp.
func (c *checker) xdpLacksSkb(field string) string {
	if !c.xdpProbe() {
		return ""
	}
	return "an XDP program sees a frame before the kernel makes an skb of it: len, dev, ifindex, pkt and pcap() read it; " +
		"for the rest read args.xdp (struct xdp_buff *): the frame is from args.xdp->data to args.xdp->data_end (" + field + " is not there yet)"
}
