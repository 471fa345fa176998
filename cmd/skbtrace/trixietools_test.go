package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// trixieTools are the Debian 13 tools of issue 19, unmodified (a
// PROVENANCE note says where they came from): ten that load as written,
// four whose kernel differences are errors that say what to write.
const trixieTools = "testdata/bpftrace-0.23-misc"

// trixieLoads are the tools that load as written, with a program each
// must have: what the feature they needed compiles.
var trixieLoads = map[string]string{
	"biolatency-kp.bt": "kprobe:blk_account_io_start (Kprobe",                 // config, missing_probes
	"swapin.bt":        "kprobe:swap_read_folio (Kprobe",                      // swap_readpage is gone
	"xfsdist.bt":       "kretprobe:xfs_file_fsync (Kprobe",                    // config
	"syscount.bt":      "tracepoint:raw_syscalls:sys_enter (",                 // print(@m, 10)
	"undump.bt":        "kprobe:unix_stream_read_actor (Kprobe",               // %r
	"execsnoop.bt":     "tracepoint:syscalls:sys_enter_execveat (TracePoint",  // join, argv's offsets
	"oomkill.bt":       "kprobe:oom_kill_process (Kprobe",                     // cat
	"naptime.bt":       "tracepoint:syscalls:sys_enter_nanosleep (TracePoint", // rqtp->tv_sec
	"opensnoop.bt":     "tracepoint:syscalls:sys_exit_openat (TracePoint",     // filename's offsets
	"statsnoop.bt":     "tracepoint:syscalls:sys_enter_newlstat (TracePoint",  // filename's offsets
}

// trixieKernelDiffs are the tools this kind of kernel does not run as
// written: where one fails, the error is at this line and its hint says
// this. (Where a kernel has what the tool needs, it loads.)
var trixieKernelDiffs = map[string]struct {
	line int
	hint string
}{
	"dcsnoop.bt": {38, "this kernel has lookup_fast itself: write kprobe:lookup_fast"},
	"mdflush.bt": {29, "its module may not be loaded (modprobe it)"},
	"runqlen.bt": {36, "Linux 6.14 renamed struct cfs_rq's nr_running to nr_queued"},
	"loads.bt":   {31, "without CONFIG_KALLSYMS_ALL lists its functions only"},
}

// TestTrixieTools checks each tool against its PROVENANCE SHA256, then
// compiles it with -d, which loads every program into the verifier.
func TestTrixieTools(t *testing.T) {
	note, err := os.ReadFile(filepath.Join(trixieTools, "PROVENANCE"))
	if err != nil {
		t.Fatal(err)
	}
	sums := provenanceSum.FindAllStringSubmatch(string(note), -1)
	if len(sums) != len(trixieLoads)+len(trixieKernelDiffs) {
		t.Fatalf("PROVENANCE notes %d tools, want %d", len(sums), len(trixieLoads)+len(trixieKernelDiffs))
	}
	for _, m := range sums {
		t.Run(m[2], func(t *testing.T) {
			file := filepath.Join(trixieTools, m[2])
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if got := sha256.Sum256(text); hex.EncodeToString(got[:]) != m[1] {
				t.Errorf("SHA256 %x, PROVENANCE says %s: the file was changed", got, m[1])
			}
			code, out, errs := runCLI(t, "-d", file)
			if diff, ok := trixieKernelDiffs[m[2]]; ok && code != 0 {
				at := regexp.MustCompile(`^` + regexp.QuoteMeta(file) + `:` + `(\d+):\d+: `).FindStringSubmatch(errs)
				if code != 1 || at == nil || at[1] != strconv.Itoa(diff.line) || !strings.Contains(errs, "hint: ") || !strings.Contains(errs, diff.hint) {
					t.Errorf("exit %d, want 1 and an error at line %d with the hint %q:\n%s", code, diff.line, diff.hint, errs)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, errs)
			}
			programs := strings.Count(out, "\nprogram ")
			if verified := strings.Count(out, "verifier processed"); programs == 0 || verified != programs {
				t.Errorf("%d programs, %d verified:\n%s%s", programs, verified, errs, out)
			}
			if want, ok := trixieLoads[m[2]]; ok && !strings.Contains(out, want) {
				t.Errorf("no %q in -d's output:\n%s", want, out)
			}
		})
	}
}

// TestTrixieToolsRun runs the tools that trace tracepoints on this
// machine's commands and looks for the rows bpftrace prints: execsnoop's
// argv joined, opensnoop's and statsnoop's paths read at the syscall's
// exit from the process's memory (openat's and statx's filename, at other
// offsets than open's and newstat's), syscount's top 10 of each map.
func TestTrixieToolsRun(t *testing.T) {
	for _, tc := range []struct {
		tool, cmd string
		want      []string // regular expressions a line must match
	}{
		{"execsnoop.bt", "/bin/true skbtrace-arg1 'two words'",
			[]string{`^TIME +PID +PPID +ARGS$`, `^\d\d:\d\d:\d\d\.\d+ +\d+ +\d+ +/bin/true skbtrace-arg1 two words$`}},
		{"opensnoop.bt", "cat /etc/hostname >/dev/null",
			[]string{`^PID +COMM +FD ERR PATH$`, `^\d+ +cat +\d+ +0 /etc/hostname$`, `^\d+ +cat +-1 +2 /nonexistent/skbtrace$`}},
		{"statsnoop.bt", "stat /etc/hostname >/dev/null",
			[]string{`^PID +COMM +ERR PATH$`, `^\d+ +stat +0 /etc/hostname$`}},
		{"syscount.bt", "ls / >/dev/null",
			[]string{`^Top 10 syscalls IDs:$`, `^@syscall\[\d+\]: \d+$`, `^Top 10 processes:$`, `^@process\[ls\]: \d+$`}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			cmd := tc.cmd
			if tc.tool == "opensnoop.bt" {
				cmd += "; cat /nonexistent/skbtrace 2>/dev/null; true"
			}
			code, out, errs := runCLI(t, "-c", "sh -c '"+strings.ReplaceAll(cmd, "'", `'\''`)+"'", filepath.Join(trixieTools, tc.tool))
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, errs)
			}
			lines := strings.Split(out, "\n")
			for _, w := range tc.want {
				re := regexp.MustCompile(w)
				found := false
				for _, l := range lines {
					found = found || re.MatchString(l)
				}
				if !found {
					t.Errorf("no line matches %q:\n%s", w, out)
				}
			}
			if tc.tool == "syscount.bt" {
				// print(@syscall, 10): the top 10, however many there were.
				if n := strings.Count(out, "\n@syscall["); n != 10 {
					t.Errorf("%d @syscall lines, want the top 10:\n%s", n, out)
				}
			}
		})
	}
}
