package stdlib

import "github.com/skbtrace/skbtrace/lang/types"

// TseriesMaxIntervals is the most intervals a tseries() keeps: each is an
// element of the map (for each key).
const TseriesMaxIntervals = 1000

// TseriesAggs are tseries()'s aggregations of the values in one interval,
// by the name its fourth argument gives; "" (none given) keeps the last.
var TseriesAggs = map[string]int64{"": 0, "avg": 1, "max": 2, "min": 3, "sum": 4}

// tseries is bpftrace 0.26's time series: tseries(value, interval_ns,
// num_intervals[, "avg"|"max"|"min"|"sum"]), the last num_intervals
// intervals of interval_ns each, the value (or the aggregation of the
// values) recorded in each.
var tseries = &Func{Name: "tseries", Sig: `tseries(value, interval_ns, num_intervals [, "avg"|"max"|"min"|"sum"])`,
	Doc: "time series: the value last recorded (or the values' avg, max, min or sum) in each of the last num_intervals intervals of interval_ns (a duration: 100ms, 1s)",
	Agg: types.AggTseries,
	Infer: func(c Call) types.Type {
		const sig = `tseries(value, interval_ns, num_intervals [, "avg"|"max"|"min"|"sum"])`
		t := types.Type{Kind: types.Agg, Agg: types.AggTseries}
		if !arity(c, sig, 3, 4) || !intArg(c, 0, "tseries") {
			return t
		}
		if v, ok := c.ConstInt(1); !ok || v <= 0 {
			c.Errorf(1, "e.g. tseries(x, 100ms, 20)", "tseries' interval must be a positive constant, in nanoseconds")
		}
		if v, ok := c.ConstInt(2); !ok || v <= 0 || v > TseriesMaxIntervals {
			c.Errorf(2, "e.g. tseries(x, 1s, 60)", "tseries' number of intervals must be a constant from 1 to %d", TseriesMaxIntervals)
		}
		if c.NArgs() == 4 {
			s, ok := c.ConstStr(3)
			if _, known := TseriesAggs[s]; !ok || !known || s == "" {
				c.Errorf(3, `e.g. tseries(x, 1s, 60, "max")`, `tseries' aggregation is "avg", "max", "min" or "sum"`)
			}
		}
		return t
	}}
