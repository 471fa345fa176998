package check_test

import (
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// nanosleepFormat is sys_enter_clock_nanosleep's tracefs format (Linux 6.x).
const nanosleepFormat = `name: sys_enter_clock_nanosleep
ID: 100
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:int __syscall_nr;	offset:8;	size:4;	signed:1;
	field:const clockid_t which_clock;	offset:16;	size:8;	signed:0;
	field:int flags;	offset:24;	size:8;	signed:0;
	field:const struct __kernel_timespec * rqtp;	offset:32;	size:8;	signed:0;
	field:struct __kernel_timespec * rmtp;	offset:40;	size:8;	signed:0;
	field:struct no_such_struct_skbtrace * other;	offset:48;	size:8;	signed:0;
	field:const char *const * argv;	offset:56;	size:8;	signed:0;
	field:const char * name;	offset:64;	size:8;	signed:0;
`

// TestRecordStructPointer checks that a format field declared a pointer to
// a struct is a pointer to BTF's struct, which -> reads through, and one
// to pointers (argv) such a pointer, which [] reads; that a syscall's
// points into user memory (types.Type.User), as what is read through it
// does, and a char * or a pointer to a struct BTF lacks, typed a u64,
// too.
func TestRecordStructPointer(t *testing.T) {
	src := &lang.Source{Name: "nap.bt", Text: `tracepoint:syscalls:sys_enter_clock_nanosleep {
	$t = args.rqtp;
	printf("%d %d %d %s %d\n", args.rqtp->tv_sec, $t->tv_nsec, args.other, str(args.argv[1]), args.name);
}`}
	script, err := lang.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	opts := check.Options{BTF: kernelBTF(t), TracepointFormat: func(cat, name string) (string, string, error) {
		return "syscalls", nanosleepFormat, nil
	}}
	info, err := check.Check(script, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"args.rqtp":         "struct __kernel_timespec * user",
		"args.rqtp->tv_sec": "s64",
		"$t->tv_nsec":       "s64",
		"args.other":        "u64 user",
		"args.argv":         "char * * user",
		"args.argv[1]":      "char * user",
		"args.name":         "u64 user",
	}
	lang.Inspect(script, func(n lang.Node) bool {
		var e lang.Expr
		switch n := n.(type) {
		case *lang.FieldExpr:
			e = n
		case *lang.IndexExpr:
			e = n
		default:
			return true
		}
		text := src.Slice(e.Span())
		got := info.Types[e].String()
		if info.Types[e].User {
			got += " user"
		}
		if w, ok := want[text]; ok && got != w {
			t.Errorf("%s is %s, want %s", text, got, w)
		}
		delete(want, text)
		return true
	})
	if len(want) > 0 {
		t.Errorf("not found: %v", want)
	}
	if v := info.Vars[script.Probes[0]]["t"]; v.Kind != types.Ptr || !v.User {
		t.Errorf("$t is %v (user %v), want a user pointer", v, v.User)
	}
}
