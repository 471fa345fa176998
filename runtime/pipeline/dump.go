package pipeline

import (
	"fmt"
	"io"
	"strings"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// CompileAnyway is Compile for -d: where no backend of this kernel would
// run the script (no kprobes, say), the code is still worth reading, so it
// compiles the programs for kprobes and returns why they would not run as
// notRun. err is the compile's error where even that fails.
func (p *Plan) CompileAnyway() (notRun, err error) {
	notRun = p.Compile()
	if notRun == nil {
		return nil, nil
	}
	generic, err := codegen.Compile(p.Script, p.Info, codegen.Options{Ksym: kernel.KsymAddr, HaveFuncIP: kernel.HaveFuncIPHelper, HaveHelper: kernel.HaveHelper})
	if err != nil {
		return nil, notRun
	}
	p.Output = generic
	return notRun, nil
}

// Dump prints each compiled program's instructions to w as Start would
// load them and, where the kernel lets them load, how many instructions
// the verifier processed (where it does not, why goes to Config.Warn).
func (p *Plan) Dump(w io.Writer) {
	out := p.Output
	verified := map[string]uint32{}
	if coll, err := session.LoadWith(out, p.cfg.Verbose, p.types.typeIDs()); err != nil {
		p.cfg.warn(err.Error())
	} else {
		verified = session.Verified(coll)
		coll.Close()
	}
	for _, p := range out.Programs {
		what := "track() helper on " + p.Prog.AttachTo
		switch {
		case len(p.Merged) > 0:
			// Probes on one attach point share a program.
			names := make([]string, len(p.Merged))
			for i, m := range p.Merged {
				names[i] = m.Name
			}
			what = fmt.Sprintf("%s, %d probes in one program (%s)", p.Spec.Spec.Text, len(p.Merged), strings.Join(names, ", "))
		case p.Spec != nil:
			what = p.Spec.Spec.Text
		case p.Helper == codegen.HelperEntry:
			what = "skbret: entry, keeps the skb and time for the return"
		}
		fmt.Fprintf(w, "\nprogram %s: %s (%s, %d instructions", p.Name, what, p.Prog.Type, len(p.Prog.Instructions))
		if n, ok := verified[p.Name]; ok {
			fmt.Fprintf(w, ", verifier processed %d", n)
		}
		fmt.Fprintf(w, ")\n%v", p.Prog.Instructions)
	}
}
