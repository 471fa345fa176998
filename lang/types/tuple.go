package types

import "strings"

// TupleType is the elements of a tuple, (1, "a"), or of a record, bpftrace's
// named tuple (a=1, b="a").
type TupleType struct {
	Elems []Type
	// Names are a record's field names, one per element; nil for a tuple.
	Names []string
}

// NewTuple returns the type of a tuple of elems, or of a record where names
// are given.
func NewTuple(elems []Type, names []string) Type {
	return Type{Kind: Tuple, Tuple: &TupleType{Elems: elems, Names: names}}
}

// IsRecord reports whether t is a record (a named tuple).
func (t Type) IsRecord() bool { return t.Kind == Tuple && t.Tuple.Names != nil }

// Field is the index of a record's field name, or -1.
func (tt *TupleType) Field(name string) int {
	for i, n := range tt.Names {
		if n == name {
			return i
		}
	}
	return -1
}

// String names the type as a tuple is written: (u64, string[16]), or for
// a record (a=u64, b=string[16]).
func (tt *TupleType) String() string {
	if tt == nil {
		return "tuple"
	}
	parts := make([]string, len(tt.Elems))
	for i, e := range tt.Elems {
		parts[i] = e.String()
		if tt.Names != nil {
			parts[i] = tt.Names[i] + "=" + parts[i]
		}
	}
	if len(parts) == 1 && tt.Names == nil {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
