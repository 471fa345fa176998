package pipeline

import (
	"fmt"
	"path"
	"strings"

	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// listBPF lists the loaded tc, xdp and cgroup_skb programs a bpf: or
// bpfret: pattern matches (bpf:*, bpf:tc:cil_*, bpfret:xdp:*), a line
// each: the probe, then the program's id, where its links attach it, and
// whether it has the BTF fentry needs.
func (l *lister) listBPF(pattern string) error {
	kind, rest, _ := strings.Cut(pattern, ":")
	if rest == "" || rest == "*" {
		rest = "*:*"
	}
	if _, err := path.Match(rest, ""); err != nil {
		return fmt.Errorf("-l %q: %v", pattern, err)
	}
	progs, err := kernel.PacketProgs()
	if err != nil {
		return err
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
		l.printf("%s:%s  [%s]", kind, name, strings.Join(notes, ", "))
	}
	if n == 0 {
		return fmt.Errorf("no loaded tc, xdp or cgroup_skb program matches %q", pattern)
	}
	return nil
}
