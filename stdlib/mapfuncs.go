package stdlib

import "github.com/skbtrace/skbtrace/lang/types"

// ElemFuncs are the functions whose argument is a map element they look
// up, not a value read: delete(@m[k]) and has_key(@m[k]) (the parser
// writes bpftrace's delete(@m, k) and has_key(@m, k) so).
var ElemFuncs = map[string]bool{"delete": true, "has_key": true}

// ValueOptional are the functions with a value that may be called as a
// statement, the value dropped: delete() says whether it deleted.
var ValueOptional = map[string]bool{"delete": true}

// elemFunc is delete or has_key: a map element in, a bool out.
func elemFunc(name, doc string) *Func {
	sig := name + "(@map, key) or " + name + "(@map[key])"
	return &Func{Name: name, Sig: sig, Doc: doc, Infer: func(c Call) types.Type {
		if !arity(c, sig, 1, 1) {
			return types.Bool
		}
		// delete(@scalar) of a map without keys clears it; the checker
		// tells it from a map with keys once it knows the maps.
		if !c.IsMapElem(0) && !(name == "delete" && c.IsMap(0)) {
			c.Errorf(0, "e.g. "+name+"(@start, tid)", "%s needs a map and a key", name)
		}
		return types.Bool
	}}
}
