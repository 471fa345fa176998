package pipeline

import "github.com/skbtrace/skbtrace/runtime/session"

// Load loads the compiled programs into the kernel, which verifies them,
// and unloads them: bpftrace's --dry-run, nothing attached or run.
func (p *Plan) Load() error {
	coll, err := session.LoadWith(p.Output, p.cfg.Verbose, p.types.typeIDs())
	if err != nil {
		return err
	}
	coll.Close()
	return nil
}
