package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
)

// btfBlob builds a BTF blob of the given types: each a kind, a name and its
// vlen, with zeroed trailing records.
func btfBlob(types []struct {
	kind, vlen int
	name       string
}) []byte {
	var ts, ss bytes.Buffer
	ss.WriteByte(0)
	le := binary.LittleEndian
	for _, t := range types {
		off := 0
		if t.name != "" {
			off = ss.Len()
			ss.WriteString(t.name)
			ss.WriteByte(0)
		}
		binary.Write(&ts, le, []uint32{uint32(off), uint32(t.kind)<<24 | uint32(t.vlen), 0})
		extra := map[int]int{btfInt: 4, btfVar: 4, btfDeclTag: 4, btfArray: 12, btfStruct: 12 * t.vlen, btfUnion: 12 * t.vlen,
			btfDatasec: 12 * t.vlen, btfEnum64: 12 * t.vlen, btfEnum: 8 * t.vlen, btfFuncProto: 8 * t.vlen}[t.kind]
		ts.Write(make([]byte, extra))
	}
	var b bytes.Buffer
	binary.Write(&b, le, uint16(0xeb9f))
	b.Write([]byte{1, 0})
	binary.Write(&b, le, []uint32{24, 0, uint32(ts.Len()), uint32(ts.Len()), uint32(ss.Len())})
	b.Write(ts.Bytes())
	b.Write(ss.Bytes())
	return b.Bytes()
}

func TestParseBTFNames(t *testing.T) {
	blob := btfBlob([]struct {
		kind, vlen int
		name       string
	}{
		{btfInt, 0, "int"}, {btfPtr, 0, ""}, {btfArray, 0, ""}, {btfStruct, 3, "bpf_kprobe_multi_link"},
		{btfFwd, 0, "sk_skb_reason_drop"}, {btfFuncProto, 2, ""}, {btfFunc, 0, "kfree_skb_reason"},
		{btfEnum, 5, "skb_drop_reason"}, {btfVar, 0, "jiffies"}, {btfDatasec, 2, ".data"},
		{btfTypeTag, 0, "user"}, {btfDeclTag, 0, "x"}, {btfEnum64, 1, "e64"}, {btfUnion, 2, "u"},
	})
	kinds, err := parseBTFNames(blob)
	if err != nil {
		t.Fatal(err)
	}
	if kinds["bpf_kprobe_multi_link"] != 1<<btfStruct || kinds["skb_drop_reason"] != 1<<btfEnum ||
		kinds["kfree_skb_reason"] != 1<<btfFunc || kinds["e64"] != 1<<btfEnum64 || kinds["u"] != 1<<btfUnion {
		t.Errorf("kinds %v", kinds)
	}
	// A forward declaration is not a definition.
	if kinds["sk_skb_reason_drop"]&btfDefined != 0 || kinds["kfree_skb_reason"]&btfDefined == 0 {
		t.Errorf("btfDefined: %v", kinds)
	}
	if _, err := parseBTFNames(blob[:len(blob)-40]); err == nil {
		t.Error("a cut blob parsed")
	}
	if _, err := parseBTFNames([]byte("not btf at all, not at all")); err == nil {
		t.Error("text parsed as BTF")
	}
	bad := btfBlob([]struct {
		kind, vlen int
		name       string
	}{{25, 0, "x"}})
	if _, err := parseBTFNames(bad); err == nil {
		t.Error("kind 25 parsed")
	}
}

// TestHostBTF reads this machine's kernel BTF, where there is one: the guest
// reads its kernel's the same way.
func TestHostBTF(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skip("no /sys/kernel/btf/vmlinux")
	}
	kinds, err := readBTFNames("/sys/kernel/btf/vmlinux")
	if err != nil {
		t.Fatal(err)
	}
	if kinds["sk_buff"]&(1<<btfStruct) == 0 || kinds["ip_rcv"]&(1<<btfFunc) == 0 {
		t.Errorf("no struct sk_buff or func ip_rcv in %d names", len(kinds))
	}
	env, err := guestEnv("host")
	if err != nil {
		t.Fatal(err)
	}
	if !env.BTF("sk_buff") || env.BTF("no_such_thing_here") || len(env.Features) != len(features) {
		t.Errorf("guestEnv: %v", env)
	}
	t.Log(env)
}
