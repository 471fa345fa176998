package pipeline

import (
	"fmt"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/pcapfilter"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/session"
	"github.com/skbtrace/skbtrace/stdlib"
)

// Hops says which BPF programs --filter, --timeline and --graph trace as
// hops beside the kernel's functions, as pwru's --filter-trace-tc and
// --filter-trace-xdp do: tc programs, and XDP programs where the filter
// can be read on a frame.
type Hops struct {
	TC, XDP bool
}

// BPFHops decides the hops: where enabled (--bpf-hops, the default) and
// fentry on BPF programs works here (session.ProbeBPFTrace), tc and XDP
// programs, those loaded and those loaded while tracing. Where fentry on
// programs is refused and tc or XDP programs with BTF are loaded, one line
// to warn says why they are not hops; where a filter reads what only an
// skb has, one line says XDP programs are left out.
func BPFHops(enabled bool, filter string, warn func(string)) Hops {
	if !enabled {
		return Hops{}
	}
	if err := session.ProbeBPFTrace(); err != nil {
		if names := loadedHopProgs(); len(names) > 0 {
			warn(fmt.Sprintf("the tc and XDP programs loaded (%s) are not traced as hops: %v", strings.Join(names, ", "), err))
		}
		return Hops{}
	}
	h := Hops{TC: true, XDP: true}
	if field := skbOnly(filter); field != "" {
		h.XDP = false
		warn("XDP programs are not traced as hops: the filter reads " + field + ", which a frame has not before the kernel makes an skb of it")
	}
	return h
}

// loadedHopProgs names the loaded tc and XDP programs with BTF, at most
// five, and how many more.
func loadedHopProgs() []string {
	progs, err := kernel.PacketProgs()
	if err != nil {
		return nil
	}
	var names []string
	n := 0
	for _, p := range progs {
		if (p.Type == "tc" || p.Type == "xdp") && p.Func != "" {
			if n++; n <= 5 {
				names = append(names, fmt.Sprintf("%s %s", p.Type, p.Name))
			}
		}
	}
	if n > 5 {
		names = append(names, fmt.Sprintf("%d more", n-5))
	}
	return names
}

// skbOnly is a field the compiled filter reads that an XDP frame has not
// (pkt_type, of inbound and outbound), or "".
func skbOnly(filter string) string {
	if filter == "" {
		return ""
	}
	x, err := pcapfilter.Compile(filter, func(int) lang.Pos { return lang.Pos{} })
	if err != nil {
		return ""
	}
	found := ""
	lang.Inspect(x, func(n lang.Node) bool {
		if id, ok := n.(*lang.Ident); ok && found == "" && stdlib.LookupField(id.Name) != nil && stdlib.XdpFields[id.Name] == nil {
			found = id.Name
		}
		return found == ""
	})
	return found
}

// hopConfig begins a script with hops: their probes wait for programs
// loaded while tracing, where none is loaded yet.
const hopConfig = "config = { missing_probes = \"ignore\" }\n"

// hopProbes are the hop probes of a generated script: each tc program's
// entry and return, where pred (a predicate, /.../, or "") holds, and
// each XDP program's where xdpPred holds; entry and ret are the bodies,
// ret's printing retval (the verdict) first.
func (h Hops) probes(pred, xdpPred, entry, ret, xdpEntry, xdpRet string) string {
	var b strings.Builder
	if h.TC {
		fmt.Fprintf(&b, "bpf:tc:*%s { %s }\nbpfret:tc:*%s { %s }\n", pred, entry, pred, ret)
	}
	if h.XDP && xdpEntry != "" {
		fmt.Fprintf(&b, "bpf:xdp:*%s { %s }\nbpfret:xdp:*%s { %s }\n", xdpPred, xdpEntry, xdpPred, xdpRet)
	}
	return b.String()
}

// on reports whether some program type is a hop.
func (h Hops) on() bool { return h.TC || h.XDP }
