package pcapfilter

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
)

// errShort is a load past the end of the packet: the filter is false.
var errShort = fmt.Errorf("load past the end")

// eval interprets a compiled filter on an Ethernet frame as the code
// generator's program does, so that the compiler's meaning can be compared
// with tcpdump's without a kernel.
func eval(e lang.Expr, pkt []byte) (uint64, error) {
	ev := &evaluator{pkt: pkt, slots: [Slots]uint64{NoInner, NoInner, NoInner}}
	return ev.eval(e)
}

// evaluator is a frame and the offset slots a tunnel primitive stores.
type evaluator struct {
	pkt   []byte
	slots [Slots]uint64
}

func (ev *evaluator) eval(e lang.Expr) (uint64, error) {
	pkt, eval := ev.pkt, func(e lang.Expr, _ []byte) (uint64, error) { return ev.eval(e) }
	switch e := e.(type) {
	case *lang.IntLit:
		return e.Value, nil
	case *lang.UnaryExpr:
		x, err := eval(e.X, pkt)
		if err != nil {
			return 0, err
		}
		if e.Op != "!" {
			return 0, fmt.Errorf("unary %s", e.Op)
		}
		return b2u(x == 0), nil
	case *lang.CallExpr:
		switch e.Name {
		case LenFunc:
			return uint64(len(pkt)), nil
		case OffsetFunc:
			return ev.slots[e.Args[0].(*lang.IntLit).Value], nil
		case SetOffsetFunc:
			v, err := eval(e.Args[1], pkt)
			if err != nil {
				return 0, err
			}
			ev.slots[e.Args[0].(*lang.IntLit).Value] = v
			return 1, nil
		case LoadFunc:
			off, err := eval(e.Args[0], pkt)
			if err != nil {
				return 0, err
			}
			size := e.Args[1].(*lang.IntLit).Value
			if off+size > uint64(len(pkt)) {
				return 0, errShort
			}
			b := pkt[off : off+size]
			switch size {
			case 1:
				return uint64(b[0]), nil
			case 2:
				return uint64(binary.BigEndian.Uint16(b)), nil
			}
			return uint64(binary.BigEndian.Uint32(b)), nil
		}
	case *lang.BinaryExpr:
		x, err := eval(e.X, pkt)
		if err != nil {
			return 0, err
		}
		switch {
		case e.Op == "&&" && x == 0:
			return 0, nil
		case e.Op == "||" && x != 0:
			return 1, nil
		}
		y, err := eval(e.Y, pkt)
		if err != nil {
			return 0, err
		}
		switch e.Op {
		case "&&", "||":
			return b2u(y != 0), nil
		case "==":
			return b2u(x == y), nil
		case "!=":
			return b2u(x != y), nil
		case "<":
			return b2u(x < y), nil
		case "<=":
			return b2u(x <= y), nil
		case ">":
			return b2u(x > y), nil
		case ">=":
			return b2u(x >= y), nil
		case "+":
			return x + y, nil
		case "-":
			return x - y, nil
		case "*":
			return x * y, nil
		case "/":
			if y == 0 {
				return 0, nil
			}
			return x / y, nil
		case "%":
			if y == 0 {
				return x, nil
			}
			return x % y, nil
		case "&":
			return x & y, nil
		case "|":
			return x | y, nil
		case "^":
			return x ^ y, nil
		case "<<":
			return x << y, nil
		case ">>":
			return x >> y, nil
		}
	}
	return 0, fmt.Errorf("cannot evaluate %T", e)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// sexpr prints a compiled filter compactly: (&& (== (ld 12 2) 2048) ...).
func sexpr(e lang.Expr) string {
	switch e := e.(type) {
	case *lang.IntLit:
		return fmt.Sprint(e.Value)
	case *lang.UnaryExpr:
		return "(" + e.Op + " " + sexpr(e.X) + ")"
	case *lang.BinaryExpr:
		return "(" + e.Op + " " + sexpr(e.X) + " " + sexpr(e.Y) + ")"
	case *lang.CallExpr:
		var args []string
		for _, a := range e.Args {
			args = append(args, sexpr(a))
		}
		name := map[string]string{LoadFunc: "ld", LenFunc: "len", OffsetFunc: "off", SetOffsetFunc: "set"}[e.Name]
		return "(" + strings.Join(append([]string{name}, args...), " ") + ")"
	}
	return fmt.Sprintf("%T", e)
}
