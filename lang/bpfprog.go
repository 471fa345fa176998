package lang

import (
	"strconv"
	"strings"
)

// BpfProgTypes are the program types a bpf: probe names, as -l lists them;
// * is any of them.
var BpfProgTypes = []string{"tc", "xdp", "cgroup_skb"}

// bpfProgSpec parses what follows bpf: or bpfret: (TYPE:GLOB, TYPE:ID, or
// bpftrace's ID:NAME after the type) into s.Category (the type), s.Name
// (the glob on the program's name) and s.ProgID.
func (l *lowerer) bpfProgSpec(sp Span, s *ProbeSpec, rest string) {
	kind := string(s.Kind)
	typ, target, ok := strings.Cut(rest, ":")
	s.Target = rest
	if !ok || typ == "" || target == "" {
		l.diags.Add(sp, "write "+kind+":TYPE:NAME, TYPE tc, xdp, cgroup_skb or *, NAME a glob on the program's name or its id, e.g. "+kind+":tc:cil_* or "+kind+":xdp:42", "%s needs a program type and a name, got %q", kind, rest)
		return
	}
	if typ != "*" && !containsStr(BpfProgTypes, typ) {
		hint := "program types are tc, xdp, cgroup_skb, or * for any"
		if m := Suggest(typ, BpfProgTypes); m != "" {
			hint = "did you mean " + m + "?"
		}
		l.diags.Add(sp, hint, "unknown BPF program type %q", typ)
		return
	}
	s.Category, s.Name = typ, target
	idText, name, hasName := strings.Cut(target, ":")
	if id, err := strconv.ParseUint(idText, 10, 32); err == nil {
		s.ProgID, s.Name = uint32(id), "*"
		if hasName {
			s.Name = name
		}
		if id == 0 {
			l.diags.Add(sp, "program ids start at 1; -l 'bpf:*' lists them", "invalid program id 0")
		}
		if !hasName {
			return
		}
		target = name
	}
	if !isGlob(target) || strings.Contains(target, ":") {
		l.diags.Add(sp, "a program's name has letters, digits, _ and ., and the glob characters * ? [ ]", "invalid program name %q", target)
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
