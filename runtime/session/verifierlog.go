package session

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// ProgramLog is one program's verifier log (bpftrace's -d verifier).
type ProgramLog struct {
	Name string
	Log  string
	// Err is why the kernel refused the program, where it did.
	Err error
}

// VerifierLogs loads each of out's programs with the verifier's log on
// (instructions and stats) and returns the logs in out's order. The
// programs are closed again: this is for reading, not for tracing.
func VerifierLogs(out *codegen.Output) []ProgramLog {
	raiseMemlock()
	maps := map[string]*ebpf.MapSpec{}
	for k, m := range allocOnUpdate(out.Maps) {
		maps[k] = m
	}
	var logs []ProgramLog
	for _, p := range out.Programs {
		cs := &ebpf.CollectionSpec{Maps: maps, Programs: map[string]*ebpf.ProgramSpec{p.Name: p.Prog}}
		coll, err := ebpf.NewCollectionWithOptions(cs, ebpf.CollectionOptions{Cache: kernel.SpecCache(),
			Programs: ebpf.ProgramOptions{LogLevel: ebpf.LogLevelInstruction | ebpf.LogLevelStats}})
		l := ProgramLog{Name: p.Name}
		var ve *ebpf.VerifierError
		switch {
		case err == nil:
			l.Log = coll.Programs[p.Name].VerifierLog
			coll.Close()
		case errors.As(err, &ve):
			l.Log, l.Err = fmt.Sprintf("%+v", ve), errors.New("the verifier refused it")
		default:
			l.Err = err
		}
		logs = append(logs, l)
	}
	return logs
}
