package codegen

import "strconv"

// RetClass is how a function returns its value, as a return program
// reads it from the return register: its width and signedness, whether it
// is a pointer; Size 0 for void.
type RetClass struct {
	Size   uint8
	Signed bool
	Ptr    bool
}

// String is a short name, for program names: void, ptr, s32, u8 (as
// kernel.RetClass names it in the discovery cache).
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
