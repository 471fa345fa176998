// Command bigscript compiles a generated script (BEGIN probes, each a
// count() and a printf; about 1 MB, or -mb MB, or -probes N of them; with
// -has each count() in an if that has() decides, which check.Prune prunes,
// checking the script again) as skbtrace does, with its pipeline
// (runtime/pipeline: the kernel's BTF cache, or its whole BTF where the
// cache does not answer), and prints the time it took to parse, then to
// parse, check and compile it, how many programs the probes came to
// (probes on one attach point share one), and the process's peak memory
// (VmHWM: the kernel's types included):
//
//	go build -o /tmp/bigscript ./bench/bigscript && /tmp/bigscript
//
// With -o FILE it writes the script there instead, for skbtrace to run
// (bench/bigrun.sh).
package main

import (
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
	"github.com/skbtrace/skbtrace/runtime/session"
)

func main() {
	mb := flag.Float64("mb", 1, "the script's size in MB (2^20 bytes)")
	probes := flag.Int("probes", 0, "the script's number of probes, instead of -mb")
	write := flag.String("o", "", "write the script to this file and exit")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the compile to this file")
	heap := flag.String("memprofile", "", "write a heap profile after the compile to this file")
	load := flag.Bool("load", false, "load the programs into the kernel too, and say how long it took")
	has := flag.Bool("has", false, "put each probe's count() in an if (has(...)), which check.Prune prunes (checking the script again)")
	flag.Parse()
	text := generate(*mb, *probes, *has)
	if *write != "" {
		if err := os.WriteFile(*write, []byte(text), 0o644); err != nil {
			fail(err)
		}
		return
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fail(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	plan := pipeline.New(pipeline.Config{Backend: "auto", Events: "auto", Snaplen: codegen.DefaultSnaplen})
	defer plan.Close()
	if err := plan.Parse(&lang.Source{Name: "big.st", Text: text}); err != nil {
		fail(err)
	}
	parsed := time.Since(start)
	if err := plan.Check(); err != nil {
		fail(err)
	}
	if err := plan.Compile(); err != nil {
		fail(err)
	}
	out := plan.Output
	took := time.Since(start)
	if *heap != "" {
		f, err := os.Create(*heap)
		if err != nil {
			fail(err)
		}
		goruntime.GC()
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	n := 0
	for _, p := range out.Programs {
		n += p.Probes()
	}
	loaded := ""
	if *load {
		start := time.Now()
		coll, err := session.Load(out, false)
		if err != nil {
			fail(err)
		}
		loaded = fmt.Sprintf("; loaded in %.2f s", time.Since(start).Seconds())
		coll.Close()
	}
	fmt.Printf("%.2f MB of script, %d probes in %d programs: parsed in %.2f s; parsed, checked and compiled in %.2f s%s; peak memory %s\n",
		float64(len(text))/1e6, n, len(out.Programs), parsed.Seconds(), took.Seconds(), loaded, peak())
}

// generate writes BEGIN probes until the script has mb MB, or n probes
// where n is not 0; with has, each probe's count() is in an if that has()
// decides.
func generate(mb float64, n int, has bool) string {
	var b strings.Builder
	size := int(mb * (1 << 20))
	for i := 0; n > 0 && i < n || n == 0 && b.Len() < size; i++ {
		if has {
			fmt.Fprintf(&b, "BEGIN { if (has(\"tracepoint:skb:kfree_skb\")) { @m%d = count() } printf(\"%%d\\n\", %d) }\n", i, i)
			continue
		}
		fmt.Fprintf(&b, "BEGIN { @m%d = count(); printf(\"%%d\\n\", %d) }\n", i, i)
	}
	return b.String()
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
	pprof.StopCPUProfile()
	fmt.Fprintf(os.Stderr, "bigscript: %v\n", err)
	os.Exit(1)
}
