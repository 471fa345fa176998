// Package pcapfilter compiles tcpdump's filter language (pcap-filter(7))
// into skbtrace's own expression tree, so that a filter is checked and
// compiled with the script it is part of: one program for the code
// generator and the verifier, no libpcap.
//
// The tree tests the packet as libpcap's code does: bytes at offsets from
// the Ethernet header, read with the internal function pcap.load; the
// code generator provides the packet, with a synthesized Ethernet header
// where the skb has none yet.
package pcapfilter

import (
	"fmt"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
)

// Error is a mistake in a filter, at bytes [Off, End) of its text.
type Error struct {
	Off, End int
	Msg      string
	Hint     string
}

func (e *Error) Error() string { return e.Msg }

// errorf makes an Error the parser places at the token it is reading.
func errorf(format string, args ...any) *Error {
	return &Error{Off: -1, Msg: fmt.Sprintf(format, args...)}
}

// Compile parses a filter and returns the expression that is true for the
// packets it selects. pos turns a byte offset of the filter into a
// position in the script it came from, for the nodes' spans. An empty
// filter selects every packet. Errors are *Error.
func Compile(filter string, pos func(off int) lang.Pos) (x lang.Expr, err error) {
	toks, lerr := lex(filter)
	if lerr != nil {
		return nil, lerr
	}
	p := &parser{toks: toks, b: &builder{pos: pos}}
	p.b.at = p.b.spanOf(0, len(filter))
	if toks[0].kind == tokEOF {
		return p.b.num(1), nil
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			x, err = nil, e
		}
	}()
	x, _ = p.expr()
	if t := p.peek(); t.kind != tokEOF {
		p.fail(t, "", "unexpected %q: expected and, or or the end of the filter", t.text)
	}
	return x, nil
}

// parser is a recursive-descent parser of libpcap's grammar. Errors
// unwind it with a panic of *Error, recovered by Compile.
type parser struct {
	toks []token
	i    int
	b    *builder
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) fail(t token, hint, format string, args ...any) {
	end := t.end
	if end == t.off {
		end = t.off + 1
	}
	panic(&Error{Off: t.off, End: end, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// check places an error from a primitive at the token it was made for.
func (p *parser) check(t token, x lang.Expr, err error) lang.Expr {
	if err != nil {
		e := err.(*Error)
		if e.Off < 0 {
			e.Off, e.End = t.off, t.end
		}
		panic(e)
	}
	return x
}

func (p *parser) expect(op string) token {
	t := p.next()
	if t.kind != tokOp || t.text != op {
		p.fail(t, "", "expected %q, got %s", op, describe(t))
	}
	return t
}

func describe(t token) string {
	if t.kind == tokEOF {
		return "the end of the filter"
	}
	return fmt.Sprintf("%q", t.text)
}

func isOp(t token, ops ...string) bool {
	if t.kind != tokOp {
		return false
	}
	for _, o := range ops {
		if t.text == o {
			return true
		}
	}
	return false
}

func isWord(t token, words ...string) bool {
	if t.kind != tokWord {
		return false
	}
	for _, w := range words {
		if t.text == w {
			return true
		}
	}
	return false
}

func isNot(t token) bool { return isOp(t, "!") || isWord(t, "not") }

// logicOp is "&&" for `and`/`&&`, "||" for `or`/`||`, else "".
func logicOp(t token) string {
	switch {
	case isWord(t, "and") || isOp(t, "&&"):
		return "&&"
	case isWord(t, "or") || isOp(t, "||"):
		return "||"
	}
	return ""
}

var relOps = []string{">", ">=", "<", "<=", "=", "==", "!="}

var arithOps = []string{"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"}

// expr is terms joined by and and or, which have equal precedence and
// associate to the left. A bare value after and/or takes the qualifiers
// of the primitive before it: `host a or b` is `host a or host b`.
func (p *parser) expr() (lang.Expr, qual) {
	x, q := p.term(qual{})
	for {
		t := p.peek()
		op := logicOp(t)
		if op == "" {
			return x, q
		}
		p.next()
		var y lang.Expr
		if p.startsValue(p.i) {
			y = p.id(q)
		} else {
			y, q = p.term(q)
		}
		p.b.at = p.b.spanOf(t.off, t.end)
		x = p.b.bin(op, x, y)
	}
}

// isValue reports whether token j is a value (an address, a number, a
// name) that is not the start of a comparison.
func (p *parser) isValue(j int) bool {
	t := p.toks[j]
	if t.kind != tokWord || isKeyword(t.text) {
		return false
	}
	if _, ok := arithNames[t.text]; ok {
		return false
	}
	n := p.toks[min(j+1, len(p.toks)-1)]
	return !isOp(n, relOps...) && !isOp(n, arithOps...) && !isOp(n, "[")
}

// startsValue reports whether the tokens at j are a qualified value: a
// value, `not` value, or values in parentheses.
func (p *parser) startsValue(j int) bool {
	for isNot(p.toks[j]) {
		j++
	}
	if isOp(p.toks[j], "(") {
		return p.startsValue(j + 1)
	}
	return p.isValue(j)
}

// id is a value under inherited qualifiers: `b`, `not b`, `(b or c)`.
func (p *parser) id(q qual) lang.Expr {
	t := p.next()
	switch {
	case isNot(t):
		x := p.id(q)
		p.b.at = p.b.spanOf(t.off, t.end)
		return p.b.not(x)
	case isOp(t, "("):
		x := p.id(q)
		for {
			o := p.peek()
			op := logicOp(o)
			if op == "" {
				break
			}
			p.next()
			y := p.id(q)
			p.b.at = p.b.spanOf(o.off, o.end)
			x = p.b.bin(op, x, y)
		}
		p.expect(")")
		return x
	case t.kind != tokWord || isKeyword(t.text):
		p.fail(t, "", "expected a value, got %s", describe(t))
	case !q.valid:
		p.fail(t, "name what it is: host "+t.text+", net "+t.text+", port "+t.text+"...", "%q needs a qualifier before it", t.text)
	}
	return p.value(q, t)
}

// term is one primitive, a negated term, a parenthesized expression or a
// comparison. inh is the qualifiers a value in it would inherit.
func (p *parser) term(inh qual) (lang.Expr, qual) {
	t := p.peek()
	switch {
	case isNot(t):
		p.next()
		x, q := p.term(inh)
		p.b.at = p.b.spanOf(t.off, t.end)
		return p.b.not(x), q
	case isOp(t, "("):
		save, l := p.i, p.b.l
		x, perr := p.try(func() lang.Expr {
			p.next()
			x, _ := p.expr()
			p.expect(")")
			return x
		})
		if perr == nil && !isOp(p.peek(), relOps...) && !isOp(p.peek(), arithOps...) {
			return x, inh
		}
		p.i, p.b.l = save, l
		y, rerr := p.try(p.relation)
		if rerr != nil {
			if perr != nil {
				panic(perr)
			}
			panic(rerr)
		}
		return y, qual{}
	case isWord(t, "less", "greater"):
		p.next()
		n := p.number(p.next())
		p.b.at = p.b.spanOf(t.off, p.toks[p.i-1].end)
		op := "<="
		if t.text == "greater" {
			op = ">="
		}
		return p.b.bin(op, p.b.length(), p.b.num(n)), qual{}
	case isWord(t, "vlan"):
		p.next()
		var id *uint64
		if n := p.peek(); n.kind == tokWord && isNumber(n.text) {
			v := p.number(p.next())
			if v > 4095 {
				p.fail(n, "", "VLAN id %d is greater than 4095", v)
			}
			id = &v
		}
		p.b.at = p.b.spanOf(t.off, p.toks[p.i-1].end)
		return p.b.vlan(id), qual{}
	case isWord(t, "vxlan", "geneve"):
		p.next()
		var vni *uint64
		switch n := p.peek(); {
		case n.kind == tokWord && isNumber(n.text):
			v := p.number(p.next())
			if v > maxVNI {
				p.fail(n, "", "%s VNI %d is greater than %d", tunnelName[t.text], v, maxVNI)
			}
			vni = &v
		case n.kind != tokEOF && logicOp(n) == "" && !isOp(n, ")"):
			p.fail(n, "e.g. "+t.text+" 42 and udp port 53", "%s takes a VNI, a number from 0 to %d, got %q", t.text, maxVNI, n.text)
		}
		p.b.at = p.b.spanOf(t.off, p.toks[p.i-1].end)
		return p.b.tunnel(t.text, vni), qual{}
	case isWord(t, "len") || isOp(t, "-") || (t.kind == tokWord && isNumber(t.text)) || isConstName(t) ||
		(indexable[t.text] && isOp(p.peekAt(1), "[")):
		return p.relation(), qual{}
	case t.kind == tokWord && (protoQuals[t.text] || dirQuals[t.text] || kindQuals[t.text] || isWord(t, "proto", "broadcast", "multicast")):
		return p.primitive()
	case t.kind == tokWord && !isKeyword(t.text):
		p.fail(t, "name what it is: host "+t.text+", net "+t.text+", port "+t.text+"...", "%q needs a qualifier before it", t.text)
	case isWord(t, "inbound", "outbound"):
		p.next()
		p.b.at = p.b.spanOf(t.off, t.end)
		return p.b.direction(t.text == "outbound"), qual{}
	case isWord(t, "ifname", "on"):
		p.next()
		n := p.next()
		if n.kind != tokWord || isKeyword(n.text) || len(n.text) > 15 {
			p.fail(n, "e.g. ifname eth0", "%s takes an interface name, got %s", t.text, describe(n))
		}
		p.b.at = p.b.spanOf(t.off, n.end)
		return p.b.ifname(n.text), qual{}
	case isWord(t, "gateway"):
		p.fail(t, "use ether host MAC and not host IP", "gateway is out of scope: it needs the host name's Ethernet address from /etc/ethers")
	case isWord(t, "protochain"):
		p.fail(t, "", "%s is not supported", t.text)
	}
	p.fail(t, "", "unexpected %s: expected a primitive such as host, port or tcp", describe(t))
	return nil, qual{}
}

func isConstName(t token) bool {
	_, ok := arithNames[t.text]
	return t.kind == tokWord && ok
}

// try runs a parse and returns its error instead of unwinding.
func (p *parser) try(f func() lang.Expr) (x lang.Expr, err *Error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	return f(), nil
}

// primitive is qualifiers and a value (`tcp src port 80`), a protocol
// alone (`tcp`), `proto N`, or `broadcast`/`multicast`.
func (p *parser) primitive() (lang.Expr, qual) {
	start := p.peek()
	q := qual{valid: true}
	if t := p.peek(); protoQuals[t.text] {
		q.proto = p.next().text
	}
	if t := p.peek(); dirQuals[t.text] {
		q.dir = p.next().text
		if c, d := p.peek(), p.peekAt(1); isWord(c, "and", "or") && dirQuals[d.text] && d.text != q.dir {
			p.next()
			p.next()
			q.dir = "src " + c.text + " dst"
		}
	}
	t := p.peek()
	switch {
	case kindQuals[t.text]:
		q.kind = p.next().text
	case isWord(t, "proto") && q.dir == "":
		p.next()
		q.kind = "proto"
	case isWord(t, "broadcast", "multicast") && q.dir == "":
		p.next()
		p.b.at = p.b.spanOf(start.off, t.end)
		x, err := p.b.cast(q.proto, t.text)
		return p.check(t, x, err), qual{}
	case q.dir == "" && q.proto != "":
		// A protocol alone: `tcp`, `ip6`.
		if p.isValue(p.i) {
			p.fail(t, "write "+q.proto+" host "+t.text+", "+q.proto+" port "+t.text+"...", "%q needs host, net, port or proto before it", t.text)
		}
		p.b.at = p.b.spanOf(start.off, start.end)
		x, err := p.b.protoAbbrev(q.proto)
		return p.check(start, x, err), qual{}
	}
	return p.id(q), q
}

// value compiles one value under its qualifiers.
func (p *parser) value(q qual, t token) lang.Expr {
	p.b.at = p.b.spanOf(t.off, t.end)
	var x lang.Expr
	var err error
	switch q.kind {
	case "", "host":
		x, err = p.host(q, t)
	case "net":
		x, err = p.net(q, t)
	case "port":
		n := p.port(t, t.text, &q)
		x, err = p.b.ports(q, func(v lang.Expr) lang.Expr { return p.b.eq(v, n) })
	case "portrange":
		lo, hi, ok := strings.Cut(t.text, "-")
		if !ok {
			p.fail(t, "e.g. portrange 6000-6010", "a port range is LOW-HIGH, got %q", t.text)
		}
		a, b := p.port(t, lo, &q), p.port(t, hi, &q)
		if a > b {
			a, b = b, a
		}
		x, err = p.b.ports(q, func(v lang.Expr) lang.Expr {
			return p.b.and(p.b.bin(">=", v, p.b.num(a)), p.b.bin("<=", v, p.b.num(b)))
		})
	case "proto":
		x, err = p.b.protoNum(q.proto, p.protoNumber(q.proto, t))
	}
	return p.check(t, x, err)
}
