package check

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// What a script written for another kernel meets on this one, said so
// that the error tells what to write: a function this kernel's BTF lacks,
// a compiler's copy of a function another build made, a member renamed.

// missingFuncHint says why a function probe names nothing, where no name
// close to it exists: a module not loaded, a function renamed or inlined,
// and that missing_probes skips it.
func missingFuncHint(name string) string {
	return fmt.Sprintf("this kernel's BTF, and its loaded modules', has no function %s: its module may not be loaded (modprobe it), or this kernel renamed or inlined it; config = { missing_probes = \"ignore\" } skips the probe where it is missing", name)
}

// cloneSuffixes are the suffixes GCC gives the copies it makes of a
// function (lookup_fast.constprop.0, tcp_v4_rcv.cold): which copies a
// kernel has depends on its build.
var cloneSuffixes = []string{".constprop.", ".isra.", ".part.", ".cold", ".llvm."}

// cloneHint explains a function (or glob) naming a compiler's copy of a
// function (dcsnoop's kprobe:lookup_fast.constprop.*) that this build did
// not make: "" where it is not one, or the function itself is not there
// either.
func (c *checker) cloneHint(kind, glob string) string {
	at := -1
	for _, s := range cloneSuffixes {
		if i := strings.Index(glob, s); i > 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return ""
	}
	base := glob[:at]
	var fn *btf.Func
	if c.opts.BTF.TypeByName(base, &fn) != nil {
		return ""
	}
	return fmt.Sprintf("%s names a copy of %s that another kernel's compiler made (%s); this kernel has %s itself: write %s:%s, or list both with config = { missing_probes = \"ignore\" }",
		glob, base, glob[at:], base, kind, base)
}

// renamedMembers are struct members recent kernels renamed, by struct
// and old name: the new name, and the release that renamed it.
var renamedMembers = map[[2]string][2]string{
	{"cfs_rq", "nr_running"}:        {"nr_queued", "6.14"},
	{"cfs_rq", "h_nr_running"}:      {"h_nr_queued", "6.14"},
	{"cfs_rq", "idle_h_nr_running"}: {"h_nr_idle", "6.14"},
}

// renamedHint says what a member is called on this kernel where a kernel
// release renamed it (runqlen.bt's cfs_rq->nr_running, nr_queued since
// Linux 6.14); "" where it knows of no rename.
func renamedHint(structType btf.Type, name string) string {
	st, ok := btf.UnderlyingType(structType).(*btf.Struct)
	if !ok {
		return ""
	}
	r, ok := renamedMembers[[2]string{st.Name, name}]
	if !ok {
		return ""
	}
	for _, m := range st.Members {
		if m.Name == r[0] {
			return fmt.Sprintf("Linux %s renamed struct %s's %s to %s: write ->%s", r[1], st.Name, name, r[0], r[0])
		}
	}
	return ""
}
