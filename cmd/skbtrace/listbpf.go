package main

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// listBPF lists the loaded tc, xdp and cgroup_skb programs a bpf: or
// bpfret: pattern matches (bpf:*, bpf:tc:cil_*, bpfret:xdp:*), a line
// each: the probe, then the program's id, where its links attach it, and
// whether it has the BTF fentry needs.
func listBPF(pattern string, stdout, stderr io.Writer) int {
	kind, rest, _ := strings.Cut(pattern, ":")
	if rest == "" || rest == "*" {
		rest = "*:*"
	}
	if _, err := path.Match(rest, ""); err != nil {
		fmt.Fprintf(stderr, "skbtrace: -l %q: %v\n", pattern, err)
		return 1
	}
	progs, err := kernel.PacketProgs()
	if err != nil {
		fmt.Fprintf(stderr, "skbtrace: %v\n", err)
		return 1
	}
	where := kernel.PacketProgAttachments()
	n := 0
	for _, p := range progs {
		name := p.Type + ":" + p.Name
		if ok, _ := path.Match(rest, name); !ok {
			continue
		}
		n++
		notes := []string{fmt.Sprintf("id %d", p.ID)}
		notes = append(notes, where[p.ID]...)
		if p.Func == "" {
			notes = append(notes, "no BTF: cannot be traced")
		}
		fmt.Fprintf(stdout, "%s:%s  [%s]\n", kind, name, strings.Join(notes, ", "))
	}
	if n == 0 {
		fmt.Fprintf(stderr, "skbtrace: no loaded tc, xdp or cgroup_skb program matches %q\n", pattern)
		return 1
	}
	return 0
}
