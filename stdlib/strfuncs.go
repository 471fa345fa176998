package stdlib

import "github.com/skbtrace/skbtrace/lang/types"

// bpftrace 0.26's string functions beyond strcontains (stdlib.md),
// computed in the program (codegen/strfuncs.go).
var funcsString = []*Func{
	{Name: "strlen", Sig: "strlen(s)", Doc: "the length of a string: its bytes before the first NUL", Infer: func(c Call) types.Type {
		if arity(c, "strlen(s)", 1, 1) {
			stringArg(c, 0, "strlen", `e.g. strlen(comm)`)
		}
		return types.U64
	}},
	{Name: "strstr", Sig: `strstr(haystack, "needle")`, Doc: "where needle (a string known when the script is compiled) first is in haystack, from 0; -1 where it is not", Infer: func(c Call) types.Type {
		const hint = `e.g. strstr(comm, "ssh")`
		if arity(c, `strstr(haystack, "needle")`, 2, 2) {
			stringArg(c, 0, "strstr", hint)
			if _, ok := c.ConstStr(1); !ok && c.Arg(1).Kind != types.Invalid {
				c.Errorf(1, hint, "strstr's needle must be a string known when the script is compiled")
			}
		}
		return types.S64
	}},
	globmatch,
	{Name: "memcmp", Sig: "memcmp(left, right, count)", Doc: "compares the first count bytes (a constant) of two strings or arrays: 0 where they are the same, else the first differing byte of left less that of right", Infer: func(c Call) types.Type {
		const hint = "e.g. memcmp(comm, \"sshd\", 4)"
		if !arity(c, "memcmp(left, right, count)", 3, 3) {
			return types.S64
		}
		for i := range 2 {
			if t := c.Arg(i); t.Kind != types.String && t.Kind != types.Array && t.Kind != types.Invalid {
				c.Errorf(i, hint, "memcmp compares strings or arrays, got %s", t)
			}
		}
		if n, ok := c.ConstInt(2); !ok && c.Arg(2).Kind != types.Invalid {
			c.Errorf(2, hint, "memcmp's count must be known when the script is compiled")
		} else if ok && (n < 0 || n > 1024) {
			c.Errorf(2, hint, "memcmp's count must be 0 to 1024, got %d", n)
		}
		return types.S64
	}},
}

// stringArg checks that argument i is a string.
func stringArg(c Call, i int, fn, hint string) {
	if t := c.Arg(i); (t.Kind != types.String || t.Fmt == types.FmtBuf) && t.Kind != types.Invalid {
		c.Errorf(i, hint, "%s needs a string, got %s", fn, t)
	}
}

// funcsRewritten are bpftrace 0.26's functions the parser writes as other
// code (lang/findcall.go, lang/maplen.go, lang/rewrites026.go); a call it leaves is one
// of the wrong form, which these declarations report.
var funcsRewritten = []*Func{
	rewritten("find", "find(@map, key, $value)", "whether the map has the key; where it has, $value is set to its value", 3),
	{Name: "len", Sig: "len(@map)", Doc: "the number of the map's elements (bpf_for_each_map_elem, Linux 5.13); len alone is the packet's length", Infer: func(c Call) types.Type {
		c.Errorf(-1, "len(@map) counts a map's elements; len alone, without (), is the packet's length", "len() needs a map named alone")
		return types.Bad
	}},
	rewritten("socket_cookie", "socket_cookie(sk)", "the socket's cookie (sk->__sk_common.skc_cookie; 0 where the kernel gave it none yet)", 1),
}

func rewritten(name, sig, doc string, nargs int) *Func {
	return &Func{Name: name, Sig: sig, Doc: doc, Infer: func(c Call) types.Type {
		if arity(c, sig, nargs, nargs) {
			c.Errorf(-1, "the signature is "+sig, "%s is not of the form %s", name, sig)
		}
		return types.Bad
	}}
}

// globmatch is globmatch(s, "pattern"): whether the whole of s matches
// the glob, a string known when the script is compiled (?, *, [abc],
// [a-z], [!abc]); codegen/globmatch.go runs it as a set of states.
var globmatch = &Func{Name: "globmatch", Sig: `globmatch(s, "pattern")`, Doc: "whether the whole string matches the glob pattern (known when the script is compiled): ? any byte, * any run of bytes, [abc], [a-z], [!abc]", Infer: func(c Call) types.Type {
	const hint = `e.g. globmatch(comm, "ss*")`
	if !arity(c, `globmatch(s, "pattern")`, 2, 2) {
		return types.Bool
	}
	stringArg(c, 0, "globmatch", hint)
	p, ok := c.ConstStr(1)
	if !ok && c.Arg(1).Kind != types.Invalid {
		c.Errorf(1, hint, "globmatch's pattern must be a string known when the script is compiled")
		return types.Bool
	}
	if _, err := ParseGlob(p); ok && err != nil {
		c.Errorf(1, hint, "globmatch: %v", err)
	}
	return types.Bool
}}

// funcsNames are the functions whose text user space's tables give
// (codegen/nametable.go).
var funcsNames = []*Func{
	{Name: "username", Sig: "username", Doc: "the current user's name, from /etc/passwd as it is when the script is compiled; \"\" for a uid it lacks", Infer: func(c Call) types.Type {
		if arity(c, "username", 1, 1) {
			intArg(c, 0, "username")
		}
		return types.Str(UsernameLen)
	}},
	{Name: "cgroup_path", Sig: `cgroup_path(id [, "filter"])`, Doc: "the path of the cgroup v2 cgroup of the id, as bpftrace prints it (unified:/system.slice/...), from /sys/fs/cgroup as it is when the script is compiled; \"\" for a cgroup made since", Infer: func(c Call) types.Type {
		const sig = `cgroup_path(id [, "filter"])`
		if arity(c, sig, 1, 2) {
			intArg(c, 0, "cgroup_path")
			if c.NArgs() == 2 {
				if _, ok := c.ConstStr(1); !ok && c.Arg(1).Kind != types.Invalid {
					c.Errorf(1, `e.g. cgroup_path(cgroup, "unified")`, "cgroup_path's filter must be a string literal")
				}
			}
		}
		return types.Str(CgroupPathLen)
	}},
}
