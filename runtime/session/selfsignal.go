package session

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
)

// selfSignals are the signals self:signal probes name.
var selfSignals = map[string]os.Signal{"SIGUSR1": unix.SIGUSR1, "SIGUSR2": unix.SIGUSR2}

// onSignals runs the self:signal:SIG programs each time skbtrace gets
// SIG, until Detach (bpftrace 0.26's self probes).
func (s *Session) onSignals() {
	bySig := map[os.Signal][]string{}
	for _, p := range s.out.Programs {
		if p.Helper == "" && p.Attach.Kind == codegen.AttachSignal {
			if sig, ok := selfSignals[p.Attach.Name]; ok {
				bySig[sig] = append(bySig[sig], p.Name)
			}
		}
	}
	if len(bySig) == 0 {
		return
	}
	ch := make(chan os.Signal, 4)
	for sig := range bySig {
		signal.Notify(ch, sig)
	}
	stop := s.stopTimers
	s.timers.Add(1)
	go func() {
		defer s.timers.Done()
		defer signal.Stop(ch)
		for {
			select {
			case sig := <-ch:
				for _, name := range bySig[sig] {
					runProgram(s.coll.Programs[name])
				}
			case <-stop:
				return
			}
		}
	}()
}
