package main

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/skbtrace/skbtrace/scripts"
)

// seeds are the scripts the mutations start from: the bundled tools and
// one-liners covering the language.
func seeds() []string {
	s := []string{
		`skb:* /mark == 0xdeadbeef/ < print(len, dev) >`,
		`tracepoint:skb:kfree_skb { @[reason, ksym(args.location)] = count() } interval:s:1 { print(@); clear(@) }`,
		`tracepoint:skb:kfree_skb /saddr in 10.0.0.0/8 && dport == 80/ { @b[saddr, daddr] = sum(len); @h = hist(len); $x = len * 2; if ($x > 9) { printf("%s %d\n", comm, $x) } else { @l = lhist(len, 0, 100, 10) } }`,
		`tracepoint:tcp:tcp_retransmit_skb { $sk = args.sk; @[endpoint(ntop($sk->__sk_common.skc_daddr), ntohs($sk->__sk_common.skc_dport))] = count() }`,
		`kprobe:tcp_v4_rcv { @[kstack] = count(); @m = max(args.skb->len) } BEGIN { printf("go\n") } END { print(@m) }`,
	}
	for _, t := range scripts.All() {
		s = append(s, t.Text)
	}
	return s
}

var vocab = []string{"(", ")", "{", "}", "/", "@", "$x", "->", ".", ",", "==", "&&", "||", "!", "kfree_skb", "len", "saddr",
	`"`, "0x", "[", "]", ";", "\n", "skb:", "tracepoint:", "count()", "hist(", "ntop(", "endpoint(", "kstack", "track()",
	"-", "+", "*", "?", ":", "<", ">", "in", "10.0.0.0/8", "::1", "args.", "retval", "$1", "str(", "delete(@x[1])", "99999999999999999999"}

// mutate changes a script at random: deletes, inserts, duplicates or swaps.
func mutate(r *rand.Rand, s string) string {
	for range 1 + r.Intn(4) {
		if len(s) == 0 {
			return vocab[r.Intn(len(vocab))]
		}
		i := r.Intn(len(s))
		j := min(len(s), i+1+r.Intn(12))
		switch r.Intn(4) {
		case 0:
			s = s[:i] + s[j:]
		case 1:
			s = s[:i] + vocab[r.Intn(len(vocab))] + s[i:]
		case 2:
			s = s[:i] + s[i:j] + s[i:]
		case 3:
			k := r.Intn(len(s))
			s = s[:i] + s[k:min(len(s), k+j-i)] + s[j:]
		}
	}
	return s
}

// rawVerifierLog matches what only the kernel's verifier log looks like.
var rawVerifierLog = regexp.MustCompile(`(?m)\bR\d+(_w)?=|^\d+: \([0-9a-f]{2}\)|processed \d+ insns`)

// TestMutatedScriptsNeverCrash compiles 1,000 mutated scripts with -d:
// each either compiles and loads, or fails with exit status 1 and an
// error; never a panic, and never a raw verifier log without -v.
func TestMutatedScriptsNeverCrash(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	base := seeds()
	loaded, rejected := 0, 0
	for i := range 1000 {
		text := mutate(r, base[r.Intn(len(base))])
		var out, errb bytes.Buffer
		code := func() (code int) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic on script %d %q: %v", i, text, p)
				}
			}()
			return run([]string{"-d", "-e", text}, &out, &errb)
		}()
		switch {
		case code == 0:
			loaded++
		case code == 1 && errb.Len() > 0:
			rejected++
		default:
			t.Fatalf("script %q: exit %d, stderr %q", text, code, errb.String())
		}
		if rawVerifierLog.MatchString(errb.String()) {
			t.Errorf("script %q: a raw verifier log without -v:\n%s", text, errb.String())
		}
		if strings.Contains(errb.String(), "verifier rejected") {
			t.Errorf("script %q: the checker accepted it but the verifier rejected the code:\n%s", text, errb.String())
		}
	}
	t.Logf("1000 mutated scripts: %d compiled and loaded, %d rejected with an error", loaded, rejected)
	if loaded < 50 || rejected < 50 {
		t.Errorf("the mutations are not exercising both paths: %d loaded, %d rejected", loaded, rejected)
	}
}

// TestOneClearLineWhenSomethingIsMissing runs skbtrace without root and
// without BTF: each gives one line saying what is missing, exit status 1.
func TestOneClearLineWhenSomethingIsMissing(t *testing.T) {
	// A copy of this test binary that another user may run.
	dir, err := os.MkdirTemp("", "skbtrace-nobody")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := dir + "/skbtrace.test"
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	child := func(cred *syscall.Credential, args ...string) (int, string) {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "SKBTRACE_ARGS="+strings.Join(args, "\x1f"), "XDG_CACHE_HOME="+t.TempDir())
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, errb.String()
	}
	for _, tc := range []struct {
		name string
		cred *syscall.Credential
		args []string
		want string
	}{
		{"not root: -e", &syscall.Credential{Uid: 65534, Gid: 65534}, []string{"-e", `skb:* { @ = count() }`, "--duration", "10ms"}, "skbtrace needs root (or CAP_BPF and CAP_PERFMON)"},
		{"not root: -l", &syscall.Credential{Uid: 65534, Gid: 65534}, []string{"-l", "skb:*"}, "skbtrace needs root (or CAP_BPF and CAP_PERFMON)"},
		{"not root: -d", &syscall.Credential{Uid: 65534, Gid: 65534}, []string{"-d", "-e", `tracepoint:skb:kfree_skb { @ = count() }`}, "skbtrace needs root (or CAP_BPF and CAP_PERFMON)"},
		{"no BTF", nil, []string{"--btf", "/nonexistent/vmlinux", "-e", `tracepoint:skb:kfree_skb { @ = count() }`}, "load BTF from /nonexistent/vmlinux"},
		{"bad BTF", nil, []string{"--btf", "/proc/version", "-e", `tracepoint:skb:kfree_skb { @ = count() }`}, "load BTF from /proc/version"},
	} {
		code, errs := child(tc.cred, tc.args...)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want one line with %q", tc.name, code, errs, tc.want)
		}
	}
}
