package check

import (
	"fmt"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
)

// Describe says what the checker learned of a node: an expression's type and
// what its name resolved to, a probe's context. It is used by `skbtrace -d`
// and the checker's golden files.
func (info *Info) Describe(n lang.Node) string {
	var parts []string
	switch n := n.(type) {
	case *lang.Probe:
		p := info.Probes[n]
		if p == nil {
			return ""
		}
		var ctx []string
		if p.Skb {
			ctx = append(ctx, "skb")
		}
		if p.Reason {
			ctx = append(ctx, "reason")
		}
		if p.Retval.Kind != 0 {
			ctx = append(ctx, "retval "+p.Retval.String())
		}
		for _, a := range p.Params {
			ctx = append(ctx, fmt.Sprintf("args.%s %s", a.Name, a.Type))
		}
		return "context: " + strings.Join(ctx, ", ")
	case *lang.ProbeSpec:
		return info.describeUserSpec(n)
	case lang.Expr:
		if t, ok := info.Types[n]; ok {
			parts = append(parts, t.String())
		}
		if id, ok := n.(*lang.Ident); ok {
			if f := info.Fields[id]; f != nil {
				parts = append(parts, "builtin "+f.Name)
			}
		}
		if m, ok := n.(*lang.FieldExpr); ok {
			if mem, ok := info.Members[m]; ok {
				s := fmt.Sprintf("member at bit %d", mem.Offset)
				if mem.BitfieldSize > 0 {
					s += fmt.Sprintf(", %d-bit field", mem.BitfieldSize)
				}
				parts = append(parts, s)
			}
		}
		if i, ok := info.ArgRefs[n]; ok {
			parts = append(parts, fmt.Sprintf("arg %d", i))
		}
		if k, ok := info.Consts[n]; ok {
			if k.IsStr {
				parts = append(parts, fmt.Sprintf("const %q", k.Str))
			} else {
				parts = append(parts, fmt.Sprintf("const %d", k.Int))
			}
		}
	}
	return strings.Join(parts, "; ")
}
