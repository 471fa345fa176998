package check

import (
	"errors"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/pcapfilter"
	"github.com/skbtrace/skbtrace/lang/types"
)

// pcap checks `pcap("filter")`: the filter is compiled into an expression
// of the script's own tree, recorded in Info.Pcap and checked like the
// rest, so the code generator sees one program. Errors in the filter
// point into the string.
func (c *checker) pcap(e *lang.CallExpr) types.Type {
	if len(e.Args) != 1 {
		c.errorf(e, `e.g. pcap("tcp port 80")`, "pcap takes one filter string, got %d arguments", len(e.Args))
		return types.Bad
	}
	arg := e.Args[0]
	c.expr(arg)
	k, ok := c.info.Consts[arg]
	if !ok || !k.IsStr {
		c.errorf(arg, `e.g. pcap("tcp port 80"), or pcap($1)`, "pcap's filter must be a constant string")
		return types.Bad
	}
	// Offsets in the filter are offsets in the script where the literal
	// holds the filter as written (no escapes); elsewhere, the argument.
	sp := arg.Span()
	pos := func(int) lang.Pos { return sp.Start }
	if lit, ok := arg.(*lang.StrLit); ok && c.src.Slice(sp) == `"`+lit.Value+`"` {
		pos = func(off int) lang.Pos { return c.src.PosAt(sp.Start.Offset + 1 + off) }
	}
	x, err := pcapfilter.Compile(k.Str, pos)
	var fe *pcapfilter.Error
	if errors.As(err, &fe) {
		c.diags.Add(lang.Span{Start: pos(fe.Off), End: pos(fe.End)}, fe.Hint, "filter: %s", fe.Msg)
		return types.Bad
	}
	if err != nil {
		c.errorf(arg, "", "filter: %v", err)
		return types.Bad
	}
	c.info.Pcap[e] = x
	c.expr(x)
	return types.Bool
}

// captureFields are what a capture() frame's comment and interface name
// read of the skb.
var captureFields = []string{"mark", "netns", "ifindex", "dev"}

// capture checks `capture()`: it records the fields its frame is annotated
// with, checked as if the script had named them, in Info.Capture.
func (c *checker) capture(e *lang.CallExpr) {
	var xs []lang.Expr
	for _, name := range captureFields {
		id := &lang.Ident{At: e.At, Name: name}
		c.expr(id)
		xs = append(xs, id)
	}
	c.info.Capture[e] = xs
	if c.info.Frags == nil {
		c.info.Frags = fragLayout(c.opts.BTF)
	}
}
