package pipeline

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// listKinds are the probe kinds -l lists by a KIND: pattern besides skb:,
// by the names a script may write them with.
var listKinds = map[string]string{
	"tracepoint": "tracepoint", "t": "tracepoint",
	"kprobe": "kprobe", "k": "kprobe", "kretprobe": "kretprobe", "kr": "kretprobe",
	"fentry": "fentry", "f": "fentry", "kfunc": "fentry",
	"fexit": "fexit", "fr": "fexit", "kretfunc": "fexit",
}

// listOther lists, as bpftrace -l does, the probes of a pattern that names
// its kind (tracepoint:net:*, kprobe:tcp_*, fentry:ip_*), or the structs of
// `struct NAME` (-v: their members). handled is false for the patterns
// list itself serves: skb: and bare names.
func (l *lister) listOther(pattern string) (err error, handled bool) {
	if name, ok := strings.CutPrefix(pattern, "struct "); ok {
		return l.listStructs(strings.TrimSpace(name)), true
	}
	if n, ok := l.listFixed(pattern); ok {
		if n == 0 {
			return fmt.Errorf("no probe matches %q", pattern), true
		}
		return nil, true
	}
	k, glob, ok := strings.Cut(pattern, ":")
	kind := listKinds[k]
	if !ok || kind == "" {
		return nil, false
	}
	if _, err := path.Match(glob, ""); err != nil {
		return fmt.Errorf("-l %q: %v", pattern, err), true
	}
	var n int
	if kind == "tracepoint" {
		n, err = l.listTracepoints(glob)
	} else {
		n, err = l.listFuncs(kind, glob)
	}
	if err != nil {
		return err, true
	}
	if n == 0 {
		return fmt.Errorf("no probe matches %q", pattern), true
	}
	return nil, true
}

// listTracepoints lists every tracepoint of tracefs matching CATEGORY:NAME
// (a bare glob matches the name); -v adds the format fields as bpftrace
// prints them: "    TYPE NAME", the common_ fields left out.
func (l *lister) listTracepoints(glob string) (int, error) {
	cat, name, ok := strings.Cut(glob, ":")
	if !ok {
		cat, name = "*", glob
	}
	dir, _, err := kernel.Tracefs()
	if err != nil {
		return 0, err
	}
	formats, err := filepath.Glob(filepath.Join(dir, "events", "*", "*", "format"))
	if err != nil {
		return 0, err
	}
	slices.Sort(formats)
	n := 0
	for _, f := range formats {
		ev := filepath.Dir(f)
		c, e := filepath.Base(filepath.Dir(ev)), filepath.Base(ev)
		if ok, _ := path.Match(cat, c); !ok {
			continue
		}
		if ok, _ := path.Match(name, e); !ok {
			continue
		}
		n++
		l.printf("tracepoint:%s:%s", c, e)
		if l.Verbose {
			text, err := os.ReadFile(f)
			if err != nil {
				return n, err
			}
			for _, field := range formatFields(string(text)) {
				l.printf("    %s", field)
			}
		}
	}
	return n, nil
}

// formatFields are a tracefs format file's fields as declared ("void *
// skbaddr", "__data_loc char[] name"), without the common_ ones.
func formatFields(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "field:")
		if !ok {
			continue
		}
		decl, _, _ := strings.Cut(rest, ";")
		fs := strings.Fields(decl)
		if len(fs) == 0 || strings.HasPrefix(fs[len(fs)-1], "common_") {
			continue
		}
		out = append(out, decl)
	}
	return out
}

// listFuncs lists the traceable kernel functions a kprobe, kretprobe,
// fentry or fexit glob matches: those that BTF describes, which is what such
// a probe attaches to. -v adds their arguments, and retval on return
// probes, one a line as bpftrace prints them.
func (l *lister) listFuncs(kind, glob string) (int, error) {
	spec, err := loadBTF(l.BTFFile)
	if err != nil {
		return 0, err
	}
	module := ""
	if kind == "fentry" || kind == "fexit" {
		// bpftrace 0.26 names them fentry:MODULE:FUNCTION; the functions
		// listed are vmlinux's (those its BTF describes).
		module = "vmlinux:"
		if m, g, ok := strings.Cut(glob, ":"); ok {
			if ok, _ := path.Match(m, "vmlinux"); !ok {
				return 0, nil
			}
			glob = g
		}
	}
	names, err := kernel.TraceableFuncs(glob)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		var fn *btf.Func
		if spec.TypeByName(name, &fn) != nil {
			continue
		}
		proto, ok := fn.Type.(*btf.FuncProto)
		if !ok {
			continue
		}
		n++
		l.printf("%s:%s%s", kind, module, name)
		if !l.Verbose {
			continue
		}
		for _, p := range proto.Params {
			l.printf("    %s", cDecl(p.Type, p.Name))
		}
		if kind == "kretprobe" || kind == "fexit" {
			if _, void := proto.Return.(*btf.Void); !void {
				l.printf("    %s", cDecl(proto.Return, "retval"))
			}
		}
	}
	return n, nil
}

// listStructs lists the BTF structs (and unions) whose name matches; -v
// prints each one's members, in C.
func (l *lister) listStructs(glob string) error {
	spec, err := loadBTF(l.BTFFile)
	if err != nil {
		return err
	}
	var found []btf.Type
	if !strings.ContainsAny(glob, "*?[") {
		var st *btf.Struct
		if spec.TypeByName(glob, &st) == nil {
			found = append(found, st)
		}
	} else {
		seen := map[string]bool{}
		for t, err := range spec.All() {
			if err != nil {
				break
			}
			if st, ok := t.(*btf.Struct); ok && st.Name != "" && !seen[st.Name] {
				if ok, _ := path.Match(glob, st.Name); ok {
					seen[st.Name] = true
					found = append(found, st)
				}
			}
		}
		slices.SortFunc(found, func(a, b btf.Type) int { return strings.Compare(a.TypeName(), b.TypeName()) })
	}
	if len(found) == 0 {
		return fmt.Errorf("no struct matches %q in the kernel's BTF", glob)
	}
	for _, t := range found {
		st := t.(*btf.Struct)
		if !l.Verbose {
			l.printf("struct %s", st.Name)
			continue
		}
		l.printf("struct %s {", st.Name)
		l.printMembers(st.Members, "    ")
		l.printf("};")
	}
	return nil
}

// printMembers prints members one a line in C, anonymous structs and
// unions spelled out in place, since their members are read as the outer
// struct's (skb->dev).
func (l *lister) printMembers(ms []btf.Member, indent string) {
	for _, m := range ms {
		var inner []btf.Member
		kw := ""
		switch u := m.Type.(type) {
		case *btf.Struct:
			if u.Name == "" {
				inner, kw = u.Members, "struct"
			}
		case *btf.Union:
			if u.Name == "" {
				inner, kw = u.Members, "union"
			}
		}
		if kw != "" {
			l.printf("%s%s {", indent, kw)
			l.printMembers(inner, indent+"    ")
			l.printf("%s}%s;", indent, strings.TrimSuffix(" "+m.Name, " "))
			continue
		}
		d := strings.ReplaceAll(cDecl(m.Type, m.Name), "* ", "*")
		if m.BitfieldSize > 0 {
			d += fmt.Sprintf(":%d", m.BitfieldSize)
		}
		l.printf("%s%s;", indent, d)
	}
}

// cDecl declares name with type t as C does: arrays after the name
// (char name[16]), anonymous members by their type alone.
func cDecl(t btf.Type, name string) string {
	suffix := ""
	for {
		a, ok := t.(*btf.Array)
		if !ok {
			break
		}
		suffix += fmt.Sprintf("[%d]", a.Nelems)
		t = a.Type
	}
	ct := types.CName(t)
	switch u := t.(type) {
	case *btf.Struct:
		if u.Name == "" {
			ct = "struct {...}"
		}
	case *btf.Union:
		if u.Name == "" {
			ct = "union {...}"
		}
	}
	if ct == "" {
		ct = "void"
	}
	if name == "" {
		return ct + suffix
	}
	return ct + " " + name + suffix
}
