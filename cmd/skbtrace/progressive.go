package main

import (
	"fmt"
	"time"

	"github.com/skbtrace/skbtrace/runtime/pipeline"
)

// progressiveMin is the estimated attach time (pipeline.Plan.Estimate, in
// the VM suite's units) from which --progressive=auto attaches the
// packet's main path first: below it the whole set is ready about as soon.
const progressiveMin = 3 * time.Second

// setProgressive applies --progressive to the plan: true attaches the
// functions of a packet's main path first and traces while the others
// attach; auto does so where the attach is estimated to take long (a
// function backend without kprobe-multi on many functions) and no -c
// command waits for it (a command's packets should meet every probe);
// false attaches all before tracing.
func setProgressive(o options, plan *pipeline.Plan) error {
	switch o.progressive {
	case "auto", "true", "false":
	default:
		return fmt.Errorf("--progressive takes auto, true or false, not %q", o.progressive)
	}
	if plan.Funcs == nil {
		return nil
	}
	// What the packet's main path needs not attaches while tracing
	// (session.FuncAttach.LateWork), but for a command, whose packets
	// should meet it all, and with --progressive=false.
	plan.Funcs.LateWork = o.command == "" && o.progressive != "false"
	switch o.progressive {
	case "true":
		plan.Funcs.Progressive = true
	case "auto":
		plan.Funcs.Progressive = o.command == "" && plan.Estimate != nil && plan.Estimate.Attach >= progressiveMin
	}
	return nil
}
