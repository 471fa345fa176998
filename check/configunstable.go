package check

import "github.com/skbtrace/skbtrace/lang"

// bpftrace 0.26's unstable features (language.md, "unstable features"):
// each a config variable that is error (using the feature is an error),
// warn (bpftrace's default: allowed, with a warning) or enable. skbtrace
// runs them as bpftrace does where allowed, without the warning; where a
// script turns map declarations off, declaring one is an error.
var unstableFeatures = []string{"unstable_map_decl", "unstable_tseries", "unstable_addr", "unstable_macro", "unstable_import"}

func init() {
	for _, name := range unstableFeatures {
		v := configVar{value: cfgWord, words: []string{"error", "warn", "enable"},
			apply: func(*Config, *lang.ConfigEntry) {}}
		if name == "unstable_map_decl" {
			v.apply = func(c *Config, e *lang.ConfigEntry) { c.UnstableMapDecl = e.Value }
		}
		configVars[name] = v
	}
}

// mapDeclsAllowed reports whether the script may declare maps, having
// said so at the first declaration where it may not.
func (c *checker) mapDeclsAllowed(decls []*lang.MapDecl) bool {
	if c.info.Config.UnstableMapDecl != "error" || len(decls) == 0 {
		return true
	}
	c.errorf(decls[0], "drop the declaration, or set unstable_map_decl = enable", "map declarations are turned off (config unstable_map_decl = error)")
	return false
}
