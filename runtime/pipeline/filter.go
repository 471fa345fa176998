package pipeline

import (
	"strings"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/pcapfilter"
)

// filterLine is what --filter alone prints for each hop of a matching
// packet, as pwru does: the device, the namespace, the mark, and the packet
// decoded as tcpdump prints it.
const filterLine = "print(dev, netns, mark, pkt)"

// CheckFilter compiles --filter on its own, so that its errors point into
// it, not into the script it becomes part of.
func CheckFilter(filter string) error {
	src := &lang.Source{Name: "--filter", Text: filter}
	_, err := pcapfilter.Compile(filter, src.PosAt)
	if fe, ok := err.(*pcapfilter.Error); ok {
		d := &lang.Diagnostics{Src: src}
		d.Add(lang.Span{Start: src.PosAt(fe.Off), End: src.PosAt(fe.End)}, fe.Hint, "%s", fe.Msg)
		return d
	}
	return err
}

// Quote writes a string literal of the script language.
func Quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(s) + `"`
}

// FilterScript is the program of --filter without a script: every skb
// function, each hop of a matching packet a line, or with -w a frame; and
// the hops h says, each program's entry and return, the return's line
// with its verdict (an XDP program's with the frame's device, length and
// headers; with -w, only tc programs, whose packets are skbs).
// With follow, the skb: probe follows what it matches (track()): the hops of the same
// logical packet where the filter no longer matches them pass too (after
// NAT, encapsulation or decapsulation, in its GSO segments, fragments,
// reassembled datagram and GRO head: codegen/packetedges.go), each
// followed skb's entry in track()'s bounded map, marked ended where the
// skb is freed. The pod filters alone do not follow: they print the hops
// in their pods' namespaces (ScopedFilter).
func FilterScript(filter string, write, follow bool, h Hops) *lang.Source {
	body, ret := filterLine, filterRetLine
	if write {
		body, ret = "capture()", "capture()"
		h.XDP = false
	}
	pred := " /pcap(" + Quote(filter) + ")/"
	track := ""
	if follow {
		track = "track(); "
	}
	text := "skb:*" + pred + " { " + track + body + " }\n"
	if h.on() {
		text = hopConfig + text + h.probes(pred, pred, body, ret, xdpLine, xdpRetLine)
	}
	return &lang.Source{Name: "--filter", Text: text}
}

// The lines of BPF programs' hops in --filter: a tc program's return with
// its verdict, an XDP program's frame (it has no skb yet: its device,
// length and headers) at its entry and return.
const (
	filterRetLine = "print(retval, dev, netns, mark, pkt)"
	xdpLine       = "print(dev, len, pkt)"
	xdpRetLine    = "print(retval, dev, len, pkt)"
)

// TimelineScript is the program of --timeline with --filter and no
// script: every hop of a matching packet, followed with track() where the
// filter would no longer match it, and the drop's reason and location;
// the hops h says, a program's return with its verdict (an XDP program's
// in its frame's block).
func TimelineScript(filter string, h Hops) *lang.Source {
	pred := " /pcap(" + Quote(filter) + ")/"
	text := "skb:*" + pred + " { track(); print(dev, netns, len) }\n" +
		"tracepoint:skb:kfree_skb" + pred + " { print(reason, ksym(location)) }\n"
	if h.on() {
		text = hopConfig + text + h.probes(pred, pred, "print(dev, netns, len)", "print(retval, dev, netns, len)", "print(dev, len)", "print(retval, dev, len)")
	}
	return &lang.Source{Name: "--timeline", Text: text}
}
