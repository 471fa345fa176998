package pcapfilter

import "github.com/skbtrace/skbtrace/lang"

// relation is `arith relop arith`: a comparison of 32-bit unsigned values,
// true only where every header it reads is present (`tcp[13]` needs an
// IPv4 TCP packet that is the first fragment).
func (p *parser) relation() lang.Expr {
	start := p.peek()
	x, pre := p.arith(0)
	opTok := p.next()
	if !isOp(opTok, relOps...) {
		p.fail(opTok, "e.g. tcp[13] & 2 != 0", "expected a comparison (= != < <= > >=), got %s", describe(opTok))
	}
	y, pre2 := p.arith(0)
	p.b.at = p.b.spanOf(start.off, p.toks[p.i-1].end)
	op := opTok.text
	if op == "=" {
		op = "=="
	}
	return p.b.and(p.b.and(pre, pre2), p.b.bin(op, x, y))
}

// arithLevels are the binary operators by precedence, lowest first.
var arithLevels = [][]string{{"|", "^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}}

// arith parses operators of precedence level and above; it returns the
// value and the condition under which it can be read (nil: always).
func (p *parser) arith(level int) (lang.Expr, lang.Expr) {
	if level == len(arithLevels) {
		return p.atom()
	}
	x, pre := p.arith(level + 1)
	for isOp(p.peek(), arithLevels[level]...) {
		t := p.next()
		y, pre2 := p.arith(level + 1)
		pre = p.b.and(pre, pre2)
		p.b.at = p.b.spanOf(t.off, t.end)
		if lit, ok := y.(*lang.IntLit); ok && lit.Value == 0 && (t.text == "/" || t.text == "%") {
			p.fail(t, "", "division by zero")
		}
		x = p.b.bin(t.text, x, y)
		switch t.text {
		case "+", "-", "*", "<<":
			x = p.b.u32(x)
		}
	}
	return x, pre
}

// atom is a number, a named constant, len, a packet load, a parenthesized
// expression or a negation.
func (p *parser) atom() (lang.Expr, lang.Expr) {
	t := p.next()
	p.b.at = p.b.spanOf(t.off, t.end)
	switch {
	case isOp(t, "("):
		x, pre := p.arith(0)
		p.expect(")")
		return x, pre
	case isOp(t, "-"):
		x, pre := p.atom()
		p.b.at = p.b.spanOf(t.off, t.end)
		return p.b.u32(p.b.bin("-", p.b.num(0), x)), pre
	case isWord(t, "len"):
		return p.b.length(), nil
	case t.kind == tokWord && indexable[t.text] && isOp(p.peek(), "["):
		return p.index(t)
	case isConstName(t):
		return p.b.num(arithNames[t.text]), nil
	case t.kind == tokWord && isNumber(t.text):
		return p.b.num(p.number(t)), nil
	}
	p.fail(t, "", "expected a number, len or proto[offset], got %s", describe(t))
	return nil, nil
}

// index is `proto[offset]` or `proto[offset:size]`: size bytes at offset
// from the start of that protocol's header.
func (p *parser) index(proto token) (lang.Expr, lang.Expr) {
	p.expect("[")
	off, pre := p.arith(0)
	size := uint64(1)
	if isOp(p.peek(), ":") {
		p.next()
		st := p.next()
		size = p.number(st)
		if size != 1 && size != 2 && size != 4 {
			p.fail(st, "", "the size of a load is 1, 2 or 4 bytes, got %d", size)
		}
	}
	end := p.expect("]")
	b := p.b
	b.at = b.spanOf(proto.off, end.end)
	var at, need lang.Expr
	switch proto.text {
	case "ether":
		at = b.add(off, b.linkOff(0))
	case "ip", "ip6", "arp", "rarp":
		x, _ := b.protoAbbrev(proto.text)
		need, at = x, b.add(off, b.netOff(0))
	case "icmp6":
		need = b.and(b.etherType(etherIPv6), b.eq(b.ldNet(6, 1), 58))
		at = b.add(off, b.netOff(40))
	default: // tcp, udp, sctp, icmp, igmp: IPv4, first fragment
		need = b.and(b.ipProto(ipProtos[proto.text]), b.firstFrag())
		at = b.transport(off)
	}
	return b.load(at, int(size)), b.and(need, pre)
}
