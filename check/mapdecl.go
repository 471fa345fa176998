package check

import (
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// mapDecls checks the script's map declarations (let @m = lruhash(N))
// against the maps as the probes use them, and records them
// (Info.MapDecls). A percpu map holds aggregations (count(), sum()...),
// which skbtrace keeps per CPU in any map; a percpuarray map has no
// keys. A declared map no probe uses is a note.
func (c *checker) mapDecls(decls []*lang.MapDecl) {
	if !c.mapDeclsAllowed(decls) {
		return
	}
	for _, d := range decls {
		mi := c.info.Maps[d.Name]
		if mi == nil {
			// bpftrace's words, which its tests look for.
			c.info.Notes = append(c.info.Notes, "WARNING: Unused map: "+mapName(d.Name))
			continue
		}
		switch d.Type {
		case "percpuhash", "percpulruhash", "percpuarray":
			if mi.Value.Kind != types.Agg && mi.Value.Kind != types.Invalid {
				c.errorf(nameNode{d.TypeSpan}, "a "+d.Type+" map holds an aggregation (count(), sum(), ...): declare "+mapName(d.Name)+" hash or lruhash",
					"%s holds %s, not an aggregation", mapName(d.Name), mi.Value)
				continue
			}
		}
		if d.Type == "percpuarray" && len(mi.Keys) > 0 {
			c.errorf(nameNode{d.TypeSpan}, "a percpuarray map has no keys: declare "+mapName(d.Name)+" percpuhash", "%s has keys", mapName(d.Name))
			continue
		}
		if c.info.MapDecls == nil {
			c.info.MapDecls = map[string]*lang.MapDecl{}
		}
		c.info.MapDecls[d.Name] = d
	}
}

// checkScalarDeletes checks delete(@m) without a key: bpftrace's way to
// clear a map without keys, an error on a map with keys.
func (c *checker) checkScalarDeletes() {
	for _, e := range c.scalarDeletes {
		m := e.Args[0].(*lang.MapExpr)
		if mi := c.info.Maps[m.Name]; mi != nil && len(mi.Keys) > 0 {
			c.errorf(m, "e.g. delete(@start, tid)", "delete needs a map and a key")
		}
	}
}
