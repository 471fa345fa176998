package main

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// pcapng writes a little-endian pcapng file of Ethernet frames.
func pcapng(frames ...[]byte) []byte {
	var b bytes.Buffer
	block := func(typ uint32, body []byte) {
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
		n := uint32(12 + len(body))
		binary.Write(&b, binary.LittleEndian, typ)
		binary.Write(&b, binary.LittleEndian, n)
		b.Write(body)
		binary.Write(&b, binary.LittleEndian, n)
	}
	block(0x0a0d0d0a, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, 0x1a2b3c4d), 0x1_0000))
	block(1, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	for _, f := range frames {
		epb := make([]byte, 20)
		binary.LittleEndian.PutUint32(epb[12:], uint32(len(f)))
		binary.LittleEndian.PutUint32(epb[16:], uint32(len(f)))
		block(6, append(epb, f...))
	}
	return b.Bytes()
}

// segment is an Ethernet frame of a TCP segment to port with the stream's
// bytes from off, numbered from isn.
func segment(port uint16, isn, off uint32, n int) []byte {
	f := make([]byte, 14+20+20)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[9] = 0x45, 6
	binary.BigEndian.PutUint16(ip[2:], uint16(40+n))
	tcp := ip[20:]
	binary.BigEndian.PutUint16(tcp[2:], port)
	binary.BigEndian.PutUint32(tcp[4:], isn+off)
	tcp[12] = 5 << 4
	for i := 0; i < n; i++ {
		f = append(f, streamByte(off+uint32(i)))
	}
	return f
}

func TestPcapCheck(t *testing.T) {
	isn := uint32(0xfffff000) // the sequence numbers wrap
	good := [][]byte{segment(4812, isn, 1000, 3000), segment(4812, isn, 4000, 5000), segment(9, isn, 0, 100), segment(4812, isn, 0, 1000)}
	st, err := checkPcapng(bytes.NewReader(pcapng(good...)), 4812)
	if err != nil || st.wrong != 0 || st.bytes != 9000 || st.segments != 3 || st.packets != 4 {
		t.Fatalf("good stream: %+v, %v", st, err)
	}
	bad := segment(4812, isn, 9000, 2000)
	bad[len(bad)-700]++
	st, err = checkPcapng(bytes.NewReader(pcapng(append(good, bad)...)), 4812)
	if err != nil || st.wrong != 1 {
		t.Fatalf("one wrong byte: %+v, %v", st, err)
	}
}
