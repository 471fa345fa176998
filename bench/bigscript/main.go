// Command bigscript compiles a generated script of about 1 MB (BEGIN probes,
// each a count() and a printf) the way skbtrace does, against the running
// kernel's BTF, and prints the time it took to parse, then to parse, check
// and compile it, and the process's peak memory (VmHWM: decoding the kernel's
// BTF included):
//
//	go build -o /tmp/bigscript ./bench/bigscript && /tmp/bigscript
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

func main() {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "BEGIN { @m%d = count(); printf(\"%%d\\n\", %d) }\n", i, i)
	}
	spec, err := kernel.BTF()
	if err != nil {
		fail(err)
	}
	start := time.Now()
	script, err := lang.Parse(&lang.Source{Name: "big.st", Text: b.String()})
	if err != nil {
		fail(err)
	}
	parsed := time.Since(start)
	info, err := check.Check(script, runtime.CheckOptions(spec, nil, func(string) {}))
	if err != nil {
		fail(err)
	}
	out, err := codegen.Compile(script, info, codegen.Options{Ksym: kernel.KsymAddr})
	if err != nil {
		fail(err)
	}
	took := time.Since(start)
	fmt.Printf("%.2f MB of script, %d probes: parsed in %.2f s; parsed, checked and compiled in %.2f s; peak memory %s\n",
		float64(b.Len())/1e6, len(out.Programs), parsed.Seconds(), took.Seconds(), peak())
}

// peak is the process's resident high-water mark, as /proc says it.
func peak() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "bigscript: %v\n", err)
	os.Exit(1)
}
