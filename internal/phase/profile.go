package phase

import (
	"os"
	"runtime/pprof"
	"sync"
)

// profileEnv names a file that gets a CPU profile of the start, from the
// process's start to Done: for profiling the start on a kernel where no
// other profiler runs (bench/vm/startup.sh reads it back from a VM).
const profileEnv = "SKBTRACE_STARTPROFILE"

var (
	profile  *os.File
	stopOnce sync.Once
)

func init() {
	name := os.Getenv(profileEnv)
	if name == "" {
		return
	}
	f, err := os.Create(name)
	if err != nil {
		return
	}
	if pprof.StartCPUProfile(f) != nil {
		f.Close()
		return
	}
	profile = f
}

// Done ends the start: the CPU profile that SKBTRACE_STARTPROFILE asked
// for, if any, is written.
func Done() {
	stopOnce.Do(func() {
		if profile != nil {
			pprof.StopCPUProfile()
			profile.Close()
		}
	})
}
