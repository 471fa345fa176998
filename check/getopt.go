package check

import (
	"strconv"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// getopt records getopt()'s value: the script's argument --NAME=VALUE
// or --NAME, else the default (false for a bool without one). A value
// that is not of the default's type is an error at the call.
func (c *checker) getopt(e *lang.CallExpr, t types.Type) {
	name, ok := c.info.Consts[lang.Unparen(e.Args[0])]
	if !ok || !name.IsStr || t.Kind == types.Invalid {
		return
	}
	value, given := c.namedArg(name.Str)
	bad := func(want string) {
		c.errorf(e, "--"+name.Str+" takes "+want, "getopt: --%s=%s is not %s", name.Str, value, want)
	}
	switch {
	case t.Fmt == types.FmtBool:
		v := false
		if len(e.Args) > 1 {
			n, _ := c.constInt(e.Args[1])
			v = n != 0
		}
		if given {
			switch value {
			case "", "1", "true":
				v = true
			case "0", "false":
				v = false
			default:
				bad("true or false")
			}
		}
		c.info.Consts[e] = boolConst(v)
	case t.IsInt():
		n, _ := c.constInt(e.Args[1])
		if given {
			var err error
			if n, err = strconv.ParseInt(value, 0, 64); err != nil {
				bad("an integer")
			}
		}
		c.info.Consts[e] = Const{Int: uint64(n)}
	case t.Kind == types.String:
		s := c.info.Consts[lang.Unparen(e.Args[1])].Str
		if given {
			s = value
		}
		c.info.Consts[e] = Const{Str: s, IsStr: true}
	}
}

// namedArg finds --name=VALUE (or --name, whose value is "") among the
// script's arguments.
func (c *checker) namedArg(name string) (string, bool) {
	for _, p := range c.opts.Params {
		arg, ok := strings.CutPrefix(p, "--"+name)
		if !ok {
			continue
		}
		if arg == "" {
			return "", true
		}
		if v, ok := strings.CutPrefix(arg, "="); ok {
			return v, true
		}
	}
	return "", false
}
