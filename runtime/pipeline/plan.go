package pipeline

import (
	"fmt"
	"io"
	"time"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/phase"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// Plan is one script on its way to the kernel: each stage fills in what
// the next needs.
type Plan struct {
	cfg   Config
	types *kernelTypes
	// Script is the parsed script (Parse), then the one to compile:
	// pruned to this kernel, --filter and -w applied (Check).
	Script *lang.Script
	// Info is what the checker learnt of Script (Check).
	Info *check.Info
	// Output is the programs and maps to load (Compile).
	Output *codegen.Output
	// Funcs is where skb:, skbret: and function globs' programs attach
	// on a function backend, or nil (Compile).
	Funcs *session.FuncAttach
	// Estimate is what attaching skb: probes with Funcs' backend is
	// expected to cost (session.Shape's figures), or nil (Compile).
	Estimate *session.Estimate
	// choice is how skb: probes could attach here (Compile).
	choice *skbChoice
	// saved is closed once the names the check looked up are saved to the
	// kernel's BTF cache (saveTypes); nil before that began.
	saved chan struct{}
}

// New starts a plan. Close ends it.
func New(cfg Config) *Plan {
	return &Plan{cfg: cfg, types: &kernelTypes{file: cfg.BTFFile}}
}

// Prepare takes a script through Parse, Check and Compile. The caller
// closes the plan, even where it fails.
func Prepare(cfg Config, src *lang.Source) (*Plan, error) {
	p := New(cfg)
	err := p.Parse(src)
	if err == nil {
		err = p.Check()
	}
	if err == nil {
		err = p.Compile()
	}
	return p, err
}

// Parse parses the script.
func (p *Plan) Parse(src *lang.Source) error {
	script, err := lang.Parse(src)
	if err != nil {
		return err
	}
	p.Script = script
	phase.Mark("parse")
	return nil
}

// Check checks the script against the kernel's types, prunes it to what
// this kernel runs and applies --filter and -w; the notes of the check go
// to Config.Warn.
func (p *Plan) Check() error {
	script, info, err := p.types.check(p.cfg, p.Script)
	if err != nil {
		return err
	}
	p.Script, p.Info = script, info
	phase.Mark("check")
	return nil
}

// Compile decides where the probes attach on this kernel and generates
// their programs.
func (p *Plan) Compile() error {
	out, funcs, err := p.compile()
	if err != nil {
		return err
	}
	p.Output, p.Funcs = out, funcs
	phase.Mark("compile")
	p.Estimate = nil
	if funcs != nil && funcs.Backend != "" && funcs.Backend != session.BackendTracepoint {
		if c := p.choice; c != nil && c.disc != nil {
			e := session.EstimateFor(funcs.Backend, c.shape(out), c.disc.TrampolineOps)
			p.Estimate = &e
		}
	}
	return nil
}

// Start loads and attaches the programs and starts reading their events,
// printed to w as opts says; the plan adds where functions attach, the
// snap length, the kernel's type IDs and its Warn. What attached goes to
// Config.Warn (with Verbose, how long it took).
func (p *Plan) Start(w io.Writer, opts session.Options) (*session.Session, error) {
	started := time.Now()
	// Between Compile and here: the names, rules and -o's files.
	phase.Mark("setup")
	opts.Funcs, opts.Snaplen, opts.KernelTypes = p.Funcs, p.cfg.Snaplen, p.types.typeIDs()
	opts.Warn = func(format string, args ...any) { p.cfg.warn(fmt.Sprintf(format, args...)) }
	if p.Funcs != nil && (p.Funcs.Progressive || p.Funcs.LateWork) {
		// The rest of a progressive start: one line at the end.
		p.Funcs.Done = func(st *session.AttachStats) {
			for _, l := range st.Summary() {
				p.cfg.warn(l)
			}
			p.cfg.warn(fmt.Sprintf("%d functions attached with %s in %v (the packet's main path first, %d more while tracing)",
				st.Attached, st.Backend, st.Elapsed.Round(time.Millisecond), st.Rest))
			if p.cfg.Verbose {
				p.cfg.warn(attachTimes(st))
			}
		}
	}
	sess, err := session.Start(p.Output, w, opts)
	if err != nil {
		return nil, err
	}
	if st := sess.FuncStats(); st != nil && st.Rest > 0 {
		p.cfg.warn(fmt.Sprintf("%d functions of the packet's main path attached first with %s in %v; the other %d attach while tracing",
			st.Main, st.Backend, st.Elapsed.Round(time.Millisecond), st.Rest))
	} else if st != nil {
		for _, l := range st.Summary() {
			p.cfg.warn(l)
		}
		if p.cfg.Verbose {
			p.cfg.warn(fmt.Sprintf("%d functions attached with %s in %v", st.Attached, st.Backend, st.Elapsed.Round(time.Millisecond)))
			p.cfg.warn(attachTimes(st))
			if st.Entries > 0 {
				p.cfg.warn(fmt.Sprintf("skbret: entries of %d functions watched for their skb and time", st.Entries))
			}
		}
	}
	if p.cfg.Verbose {
		if probes, programs := sess.Shared(); probes > programs {
			p.cfg.warn(fmt.Sprintf("%d probes run in %d programs: probes on one attach point share one", probes, programs))
		}
		p.cfg.warn(fmt.Sprintf("loaded and attached in %v", time.Since(started).Round(time.Millisecond)))
		p.cfg.warn(phase.String())
	}
	phase.Done()
	p.saveTypes()
	return sess, nil
}

// attachTimes says where attaching functions spent its time: waiting for
// programs to load (fentry's per function, verified on every CPU at once)
// and in the kernel's links.
func attachTimes(st *session.AttachStats) string {
	return fmt.Sprintf("attach time: %v waiting for programs to load, %v linking", st.Loading.Round(time.Millisecond), st.Linking.Round(time.Millisecond))
}

// saveTypes saves the names the check looked up in the whole BTF to the
// kernel's BTF cache, in the background: once tracing has started, so
// that it starts no later, and not at the end, where a cold start's save
// (most of a second under the VM suite's emulation) stood between Ctrl-C
// and the prompt.
func (p *Plan) saveTypes() {
	if p.saved != nil {
		return
	}
	var targets []string
	if p.Output != nil {
		targets = session.TracingTargets(p.Output)
	}
	done := make(chan struct{})
	p.saved = done
	go func() {
		defer close(done)
		p.types.save(targets)
	}()
}

// Close ends the plan: it saves the BTF cache where Start did not, and
// waits for the save.
func (p *Plan) Close() {
	p.saveTypes()
	<-p.saved
}
