package output

import (
	"strconv"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// HasRuleKey reports whether a map's key has a rule() part, whose records
// (a flow each) format as a rule's label: several elements may then print
// as one key.
func HasRuleKey(l *codegen.MapLayout) bool {
	for _, k := range l.Keys {
		if k.Type.Kind == types.Tuple && k.Type.Fmt == types.FmtRule {
			return true
		}
	}
	return false
}

// MergeRuleKeys makes the elements whose keys format alike one (and each
// histogram bucket of them), their values combined by the map's
// aggregation: a map keyed by rule() holds a kernel element for each flow
// a rule dropped, printed and exported as one for the rule. Other maps'
// entries are returned as they are. A plain value keeps the first read.
func MergeRuleKeys(l *codegen.MapLayout, entries []Entry) []Entry {
	if !HasRuleKey(l) {
		return entries
	}
	at := make(map[string]int, len(entries))
	out := entries[:0]
	for _, e := range entries {
		k := e.Key
		if l.IsHist() {
			k += "\x00" + strconv.FormatInt(e.Bucket, 10)
		}
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			out = append(out, e)
			continue
		}
		out[i].Value = mergeAgg(l.Value, out[i].Value, e.Value)
	}
	return out
}

// mergeAgg combines two elements' values as combine does a key's per-CPU
// values.
func mergeAgg(t types.Type, a, b Agg) Agg {
	if t.Kind != types.Agg {
		return a
	}
	switch t.Agg {
	case types.AggMin, types.AggMax:
		if !b.Seen {
			return a
		}
		if !a.Seen || (t.Agg == types.AggMin && b.N < a.N) || (t.Agg == types.AggMax && b.N > a.N) {
			return b
		}
		return a
	case types.AggAvg, types.AggStats:
		a.Cnt += b.Cnt
		a.Sum += b.Sum
		if a.Cnt > 0 {
			a.N = a.Sum / a.Cnt
		}
		return a
	}
	a.N += b.N
	return a
}
