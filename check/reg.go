package check

import (
	"strings"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/stdlib"
)

// regCall checks bpftrace's reg("name"): every probe of the block stops
// with registers (kprobe, kretprobe, uprobe, uretprobe: struct pt_regs)
// and name is one of this architecture's, as bpftrace says them.
func (c *checker) regCall(e *lang.CallExpr) {
	if len(e.Args) != 1 || c.ctx == nil {
		return
	}
	for _, s := range c.ctx.Specs {
		switch s.Spec.Kind {
		case lang.ProbeKprobe, lang.ProbeKretprobe, lang.ProbeUprobe, lang.ProbeUretprobe:
			continue
		}
		c.errorf(e, "reg reads the registers (struct pt_regs) of kprobe, kretprobe, uprobe and uretprobe probes", "reg can not be used with %q probes", strings.ToLower(string(s.Spec.Kind)))
		return
	}
	k, ok := c.info.Consts[lang.Unparen(e.Args[0])]
	if !ok || !k.IsStr {
		return
	}
	if _, ok := stdlib.RegOffset("", k.Str); !ok {
		c.errorf(e, "registers here: "+strings.Join(stdlib.RegNames(""), ", "), "'%s' is not a valid register on this architecture (%s)", k.Str, stdlib.ArchName(""))
	}
}
