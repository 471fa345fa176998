package codegen

import "github.com/skbtrace/skbtrace/lang/types"

// RetClass is how a function returns its value, as a return program reads
// it from the return register: its width and signedness, whether it is a
// pointer; Size 0 for void: lang/types' (discovery reads it from BTF
// prototypes, the code generator compiles return programs by it), so that
// both name it alike (void, ptr, s32, u8).
type RetClass = types.RetClass
