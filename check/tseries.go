package check

import "github.com/skbtrace/skbtrace/lang"

// tseriesBounds reports a tseries() whose interval, number of intervals
// or aggregation differs from the map's first: a map is one time series'
// layout, as bpftrace's ("different tseries bounds in a single map").
func (c *checker) tseriesBounds(m *lang.MapExpr, call *lang.CallExpr) {
	if c.tseries == nil {
		c.tseries = map[string]*lang.CallExpr{}
	}
	first := c.tseries[m.Name]
	if first == nil {
		c.tseries[m.Name] = call
		return
	}
	if len(first.Args) != len(call.Args) {
		c.errorf(call, "use another map", "%s's tseries differs from its first at %s", mapName(m.Name), first.Span().Start)
		return
	}
	for i := 1; i < len(call.Args); i++ {
		a, aok := c.info.Consts[first.Args[i]]
		b, bok := c.info.Consts[call.Args[i]]
		if aok != bok || a != b {
			c.errorf(call.Args[i], "use another map", "%s's tseries differs from its first at %s", mapName(m.Name), first.Span().Start)
			return
		}
	}
}
