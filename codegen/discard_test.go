package codegen_test

import "encoding/binary"

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

var nativeEndian = binary.LittleEndian
