package types

import "strconv"

// RetClass is how a kernel function returns its value, as its BTF
// prototype says and a return program reads it from the return register:
// its width and signedness, whether it is a pointer; Size 0 for void.
// Discovery (runtime/kernel) reads it from the kernel's BTF, the code
// generator compiles return programs by it (codegen.RetClass), and the
// printer prints retval by it: one type in this leaf package, so that none
// of them imports another for it.
type RetClass struct {
	Size   uint8
	Signed bool
	Ptr    bool
}

// String is a short name, for the discovery cache and -l's listing: void,
// ptr, s32, u8.
func (r RetClass) String() string {
	switch {
	case r.Size == 0:
		return "void"
	case r.Ptr:
		return "ptr"
	case r.Signed:
		return "s" + strconv.Itoa(int(r.Size)*8)
	}
	return "u" + strconv.Itoa(int(r.Size)*8)
}

// ParseRetClass reads String's names back.
func ParseRetClass(s string) (RetClass, bool) {
	switch s {
	case "void":
		return RetClass{}, true
	case "ptr":
		return RetClass{Size: 8, Ptr: true}, true
	}
	if len(s) < 2 || (s[0] != 's' && s[0] != 'u') {
		return RetClass{}, false
	}
	n, err := strconv.Atoi(s[1:])
	if err != nil || (n != 8 && n != 16 && n != 32 && n != 64) {
		return RetClass{}, false
	}
	return RetClass{Size: uint8(n / 8), Signed: s[0] == 's'}, true
}
