package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals end tracing: detach, run END, print the maps.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// signals receives stopSignals from the start of main, so that one sent
// while the programs load and attach (a script's `skbtrace ... &` then
// `kill -INT`) ends tracing as soon as they are attached instead of being
// lost. Nil when run is called in a test process.
var signals chan os.Signal

func notifySignals() {
	signals = make(chan os.Signal, 4)
	signal.Notify(signals, stopSignals...)
}

// exitNow ends the process at a second signal. Every BPF object skbtrace
// holds is a file descriptor: exiting closes them, which detaches every
// program and frees every map at once, whatever the session was doing.
var exitNow = os.Exit

// watchSignals calls stop at the first signal. At a second one it exits at
// once with 128+N, as a shell reports a death by signal N, without waiting
// for a slow reader of the output. The returned func ends the watch.
func watchSignals(stop func(), stderr io.Writer) (done func()) {
	sigs := signals
	if sigs == nil {
		sigs = make(chan os.Signal, 4)
		signal.Notify(sigs, stopSignals...)
	}
	quit := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			stop()
		case <-quit:
			return
		}
		select {
		case sig := <-sigs:
			fmt.Fprintf(stderr, "skbtrace: %v again: exiting without waiting for the output\n", sig)
			exitNow(128 + int(sig.(syscall.Signal)))
		case <-quit:
		}
	}()
	return func() {
		close(quit)
		if signals == nil {
			signal.Stop(sigs)
		}
	}
}
