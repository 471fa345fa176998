package main

import (
	"fmt"
	"io"
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
func listOther(o options, pattern string, stdout, stderr io.Writer) (code int, handled bool) {
	if name, ok := strings.CutPrefix(pattern, "struct "); ok {
		return listStructs(o, strings.TrimSpace(name), stdout, stderr), true
	}
	k, glob, ok := strings.Cut(pattern, ":")
	kind := listKinds[k]
	if !ok || kind == "" {
		return 0, false
	}
	if _, err := path.Match(glob, ""); err != nil {
		fmt.Fprintf(stderr, "skbtrace: -l %q: %v\n", pattern, err)
		return 1, true
	}
	var n int
	var err error
	if kind == "tracepoint" {
		n, err = listTracepoints(o, glob, stdout)
	} else {
		n, err = listFuncs(o, kind, glob, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1, true
	}
	if n == 0 {
		fmt.Fprintf(stderr, "skbtrace: no probe matches %q\n", pattern)
		return 1, true
	}
	return 0, true
}

// listTracepoints lists every tracepoint of tracefs matching CATEGORY:NAME
// (a bare glob matches the name); -v adds the format fields as bpftrace
// prints them: "    TYPE NAME", the common_ fields left out.
func listTracepoints(o options, glob string, w io.Writer) (int, error) {
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
		fmt.Fprintf(w, "tracepoint:%s:%s\n", c, e)
		if o.verbose {
			text, err := os.ReadFile(f)
			if err != nil {
				return n, err
			}
			for _, field := range formatFields(string(text)) {
				fmt.Fprintf(w, "    %s\n", field)
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
func listFuncs(o options, kind, glob string, w io.Writer) (int, error) {
	spec, err := loadBTF(o.btfFile)
	if err != nil {
		return 0, err
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
		fmt.Fprintf(w, "%s:%s\n", kind, name)
		if !o.verbose {
			continue
		}
		for _, p := range proto.Params {
			fmt.Fprintf(w, "    %s\n", cDecl(p.Type, p.Name))
		}
		if kind == "kretprobe" || kind == "fexit" {
			if _, void := proto.Return.(*btf.Void); !void {
				fmt.Fprintf(w, "    %s\n", cDecl(proto.Return, "retval"))
			}
		}
	}
	return n, nil
}

// listStructs lists the BTF structs (and unions) whose name matches; -v
// prints each one's members, in C.
func listStructs(o options, glob string, w io.Writer, stderr io.Writer) int {
	spec, err := loadBTF(o.btfFile)
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
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
		fmt.Fprintf(stderr, "skbtrace: no struct matches %q in the kernel's BTF\n", glob)
		return 1
	}
	for _, t := range found {
		st := t.(*btf.Struct)
		if !o.verbose {
			fmt.Fprintf(w, "struct %s\n", st.Name)
			continue
		}
		fmt.Fprintf(w, "struct %s {\n", st.Name)
		printMembers(w, st.Members, "    ")
		fmt.Fprintln(w, "};")
	}
	return 0
}

// printMembers prints members one a line in C, anonymous structs and
// unions spelled out in place, since their members are read as the outer
// struct's (skb->dev).
func printMembers(w io.Writer, ms []btf.Member, indent string) {
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
			fmt.Fprintf(w, "%s%s {\n", indent, kw)
			printMembers(w, inner, indent+"    ")
			fmt.Fprintf(w, "%s}%s;\n", indent, strings.TrimSuffix(" "+m.Name, " "))
			continue
		}
		d := strings.ReplaceAll(cDecl(m.Type, m.Name), "* ", "*")
		if m.BitfieldSize > 0 {
			d += fmt.Sprintf(":%d", m.BitfieldSize)
		}
		fmt.Fprintf(w, "%s%s;\n", indent, d)
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
