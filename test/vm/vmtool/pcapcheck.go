package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// streamByte is byte k of what `vmtool tcp` sends: a pattern whose period,
// 251, divides no page size, so that bytes read from the wrong page, or
// the wrong place in one, do not follow it.
func streamByte(k uint32) byte { return byte(k % 251) }

// pcapCheck reads a pcapng file skbtrace wrote (-w) and checks the TCP
// payload sent to PORT by `vmtool tcp`: every packet whole (its captured
// length its length), every payload byte the stream's byte at its sequence
// number. It prints what it checked and exits 1 on a mismatch, or where
// fewer than -min payload bytes were seen.
//
//	vmtool pcapcheck [-min N] FILE PORT
func pcapCheck(args []string) int {
	fs := flag.NewFlagSet("pcapcheck", flag.ExitOnError)
	minBytes := fs.Int("min", 1, "payload bytes that must be checked")
	fs.Parse(args)
	if fs.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: vmtool pcapcheck [-min N] FILE PORT")
		return 2
	}
	var port uint16
	if _, err := fmt.Sscan(fs.Arg(1), &port); err != nil {
		fmt.Fprintf(os.Stderr, "vmtool pcapcheck: port %q: %v\n", fs.Arg(1), err)
		return 2
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "vmtool pcapcheck:", err)
		return 1
	}
	defer f.Close()
	st, err := checkPcapng(f, port)
	fmt.Printf("pcapcheck: %d packets, %d to port %d, %d payload bytes checked, %d cut, %d wrong\n",
		st.packets, st.segments, port, st.bytes, st.cut, st.wrong)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vmtool pcapcheck:", err)
		return 1
	}
	if st.wrong > 0 || st.cut > 0 || st.bytes < *minBytes {
		return 1
	}
	return 0
}

type pcapStats struct {
	packets, segments, bytes, cut, wrong int
}

// checkPcapng walks the blocks of a little-endian pcapng file: interface
// descriptions for each interface's link type, enhanced packets checked.
func checkPcapng(r io.Reader, port uint16) (pcapStats, error) {
	var st pcapStats
	var links []uint16
	// The stream's first sequence number and first byte, from the first
	// segment with a payload: the others must follow from them.
	var seq0 uint32
	var b0 byte
	have := false
	hdr := make([]byte, 8)
	for {
		if _, err := io.ReadFull(r, hdr); err == io.EOF {
			return st, nil
		} else if err != nil {
			return st, err
		}
		typ, size := binary.LittleEndian.Uint32(hdr), binary.LittleEndian.Uint32(hdr[4:])
		if size < 12 || size > 1<<26 {
			return st, fmt.Errorf("a block of %d bytes", size)
		}
		body := make([]byte, size-8)
		if _, err := io.ReadFull(r, body); err != nil {
			return st, err
		}
		body = body[:len(body)-4] // the trailing length
		switch typ {
		case 0x0a0d0d0a:
			if binary.LittleEndian.Uint32(body) != 0x1a2b3c4d {
				return st, errors.New("not a little-endian pcapng file")
			}
		case 1: // interface description
			links = append(links, binary.LittleEndian.Uint16(body))
		case 6: // enhanced packet
			if len(body) < 20 {
				return st, errors.New("a short packet block")
			}
			ifc := binary.LittleEndian.Uint32(body)
			capLen, origLen := binary.LittleEndian.Uint32(body[12:]), binary.LittleEndian.Uint32(body[16:])
			if int(ifc) >= len(links) || int(capLen) > len(body)-20 {
				return st, errors.New("a packet block of no interface, or past its end")
			}
			st.packets++
			pkt := body[20 : 20+capLen]
			seq, payload, ok := tcpTo(pkt, links[ifc], port)
			if !ok {
				continue
			}
			st.segments++
			if capLen != origLen {
				st.cut++
			}
			if len(payload) == 0 {
				continue
			}
			if !have {
				seq0, b0, have = seq, payload[0], true
			}
			for i, b := range payload {
				// Offset from the first byte seen (sequence numbers wrap
				// at 2^32; a retransmission may come before it); the
				// pattern's byte there.
				k := int64(int32(seq-seq0)) + int64(i)
				want := byte(((int64(b0)+k)%251 + 251) % 251)
				st.bytes++
				if b != want {
					st.wrong++
				}
			}
		}
	}
}

// tcpTo finds a TCP segment to port in a frame of the link type (1:
// Ethernet, 101 or 228: raw IPv4): its sequence number and payload.
func tcpTo(pkt []byte, link uint16, port uint16) (uint32, []byte, bool) {
	switch link {
	case 1:
		if len(pkt) < 14 || binary.BigEndian.Uint16(pkt[12:]) != 0x0800 {
			return 0, nil, false
		}
		pkt = pkt[14:]
	case 101, 228:
	default:
		return 0, nil, false
	}
	if len(pkt) < 20 || pkt[0]>>4 != 4 || pkt[9] != 6 {
		return 0, nil, false
	}
	ihl := int(pkt[0]&15) * 4
	total := int(binary.BigEndian.Uint16(pkt[2:]))
	if total < len(pkt) {
		pkt = pkt[:total]
	}
	if len(pkt) < ihl+20 {
		return 0, nil, false
	}
	tcp := pkt[ihl:]
	if binary.BigEndian.Uint16(tcp[2:]) != port {
		return 0, nil, false
	}
	off := int(tcp[12]>>4) * 4
	if len(tcp) < off {
		return 0, nil, false
	}
	return binary.BigEndian.Uint32(tcp[4:]), tcp[off:], true
}
