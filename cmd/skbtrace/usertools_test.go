package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/internal/userbin"
)

// userTools are Debian 13's bpftrace tools that trace user-space
// functions, unmodified (a PROVENANCE note says where they came from).
const userTools = "testdata/bpftrace-0.23-user"

// TestUserToolsUnmodified checks each script against its PROVENANCE
// note's SHA256, so that an edit is caught.
func TestUserToolsUnmodified(t *testing.T) {
	note, err := os.ReadFile(filepath.Join(userTools, "PROVENANCE"))
	if err != nil {
		t.Fatal(err)
	}
	sums := provenanceSum.FindAllStringSubmatch(string(note), -1)
	files, _ := filepath.Glob(filepath.Join(userTools, "*.bt"))
	if len(files) != 5 || len(sums) != 5 {
		t.Fatalf("%d scripts, %d noted; want the five user-space tools", len(files), len(sums))
	}
	for _, m := range sums {
		text, err := os.ReadFile(filepath.Join(userTools, m[2]))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(text); hex.EncodeToString(got[:]) != m[1] {
			t.Errorf("%s: SHA256 %x, PROVENANCE says %s: the file was changed", m[2], got, m[1])
		}
	}
}

// TestUserToolsLoad compiles each tool as written with -d, which loads
// every program into the verifier: one per function its uprobes find
// here, the libraries and functions this machine lacks dropped by the
// tools' own missing_probes = "ignore" (libcrypto's local functions, which
// Debian's stripped library does not list; libpthread's pthread_create,
// in libc since glibc 2.34).
func TestUserToolsLoad(t *testing.T) {
	ssl := []string{"BEGIN",
		"uprobe:libssl:SSL_read", "uprobe:libssl:SSL_write", "uprobe:libssl:SSL_do_handshake",
		"uretprobe:libssl:SSL_read", "uretprobe:libssl:SSL_write", "uretprobe:libssl:SSL_do_handshake",
		"uprobe:libcrypto:RSA_sign", "uprobe:libcrypto:RSA_verify",
		"uretprobe:libcrypto:RSA_sign", "uretprobe:libcrypto:RSA_verify"}
	for _, tc := range []struct {
		tool   string
		libs   []string // libraries the tool needs here
		probes []string
	}{
		{"bashreadline", []string{"/bin/bash", "libreadline"}, []string{"BEGIN", "uretprobe:/bin/bash:readline", "uretprobe:libreadline:readline"}},
		{"gethostlatency", []string{"libc"}, []string{"BEGIN",
			"uprobe:libc:getaddrinfo", "uprobe:libc:gethostbyname", "uprobe:libc:gethostbyname2",
			"uretprobe:libc:getaddrinfo", "uretprobe:libc:gethostbyname", "uretprobe:libc:gethostbyname2"}},
		{"ssllatency", []string{"libssl", "libcrypto"}, append(slices.Clone(ssl), "END")},
		{"sslsnoop", []string{"libssl", "libcrypto"}, ssl},
		{"threadsnoop", []string{"libc"}, []string{"BEGIN", "uprobe:libc:pthread_create"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			for _, lib := range tc.libs {
				if _, err := userbin.Resolve(lib, runtime.GOARCH); err != nil {
					t.Skipf("%s is not installed here: %v", lib, err)
				}
			}
			code, out, errs := runCLI(t, "-d", filepath.Join(userTools, tc.tool+".bt"))
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, errs)
			}
			var got []string
			for _, m := range dumpProgram.FindAllStringSubmatch(out, -1) {
				got = append(got, m[1])
			}
			if !slices.Equal(got, tc.probes) {
				t.Errorf("programs %q, want %q", got, tc.probes)
			}
		})
	}
}

// TestUserToolsRun runs two of the tools unmodified on what they trace:
// gethostlatency on getent's getaddrinfo (str() of the name it kept at
// the entry, at the return), threadsnoop on sort's sorting threads (usym()
// of the start routine: sort's is a local function of a stripped binary,
// printed in hex, as bpftrace prints it).
func TestUserToolsRun(t *testing.T) {
	for _, tc := range []struct {
		tool, command string
		want          []string // regular expressions, each a whole line
	}{
		{"gethostlatency", "getent ahosts 127.0.0.44 >/dev/null", []string{
			`Tracing getaddr/gethost calls\.\.\. Hit Ctrl-C to end\.`,
			`TIME      PID    COMM              LATms HOST`,
			`\d\d:\d\d:\d\d  \d+ +getent +\d+ 127\.0\.0\.44`,
		}},
		{"threadsnoop", "seq 1 300000 | sort --parallel=2 -S 64M >/dev/null", []string{
			`TIME                PID COMM             FUNC`,
			`\d\d:\d\d:\d\d\.\d{6} +\d+ sort +(0x[0-9a-f]+|\w+)`,
		}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			if _, err := userbin.Resolve("libc", runtime.GOARCH); err != nil {
				t.Skip(err)
			}
			code, out, errs := runCLI(t, "-c", tc.command, filepath.Join(userTools, tc.tool+".bt"))
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, errs)
			}
			lines := strings.Split(out, "\n")
			for _, w := range tc.want {
				re := regexp.MustCompile("^" + w + "$")
				if !slices.ContainsFunc(lines, re.MatchString) {
					t.Errorf("no line matches %q in:\n%s", w, out)
				}
			}
		})
	}
}
