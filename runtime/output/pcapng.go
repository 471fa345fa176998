package output

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// pcapng block types and options (draft-ietf-opsawg-pcapng).
const (
	blockSHB = 0x0a0d0d0a
	blockIDB = 0x00000001
	blockEPB = 0x00000006

	optEnd       = 0
	optComment   = 1
	optIfName    = 2
	optIfDesc    = 3
	optIfTsres   = 9
	linkEther    = 1
	byteOrderBOM = 0x1a2b3c4d
)

// iface is what an interface block stands for: a device in a namespace.
type iface struct {
	netns, ifindex uint32
	name           [16]byte
}

// pcapngWriter writes capture() records as a pcapng file: a section
// header, an interface block the first time each device is seen, and an
// enhanced packet block per record with a comment naming the function or
// tracepoint, the skb, mark and namespace.
type pcapngWriter struct {
	w       *bufio.Writer
	snaplen uint32
	boot    time.Time
	ifaces  map[iface]uint32
	// block and comment are reused for every block written.
	block, comment []byte
	// vals names the network namespaces in the comments (pod=default/web-0).
	vals *Values
	// rot is w where it rotates (-C, -G, -W): each file a section of its
	// own, its interface blocks written again; frames counts the current
	// file's packet blocks.
	rot    *Rotator
	frames int
	// truncated, where set, counts the frames cut to the snap length
	// (Config.Truncated).
	truncated *atomic.Uint64
}

func newPcapngWriter(w io.Writer, snaplen int, boot time.Time) (*pcapngWriter, error) {
	pw := &pcapngWriter{w: bufio.NewWriterSize(w, 64<<10), snaplen: uint32(snaplen), boot: boot, ifaces: map[iface]uint32{}}
	pw.rot, _ = w.(*Rotator)
	return pw, pw.header()
}

// header writes the section header block that starts each file.
func (pw *pcapngWriter) header() error {
	b := pw.start(blockSHB)
	b = binary.LittleEndian.AppendUint32(b, byteOrderBOM)
	b = binary.LittleEndian.AppendUint16(b, 1) // version 1.0
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint64(b, ^uint64(0)) // section length unknown
	b = appendOption(b, optComment, []byte("skbtrace"))
	b = appendOption(b, optEnd, nil)
	return pw.finish(b)
}

// rotate starts the next file where the rotation is due, between two
// packet blocks: the blocks so far written out whole to the current file,
// then a new section, whose interface blocks are written again as its
// frames need them, so that the file reads alone.
func (pw *pcapngWriter) rotate() error {
	if pw.rot == nil || pw.frames == 0 || !pw.rot.Due(pw.w.Buffered()) {
		return nil
	}
	if err := pw.w.Flush(); err != nil {
		return err
	}
	if err := pw.rot.Rotate(); err != nil {
		return err
	}
	clear(pw.ifaces)
	pw.frames = 0
	return pw.header()
}

func (pw *pcapngWriter) start(typ uint32) []byte {
	b := binary.LittleEndian.AppendUint32(pw.block[:0], typ)
	return binary.LittleEndian.AppendUint32(b, 0) // length, set by finish
}

// finish sets the block's length at both ends and writes it.
func (pw *pcapngWriter) finish(b []byte) error {
	n := uint32(len(b) + 4)
	binary.LittleEndian.PutUint32(b[4:], n)
	b = binary.LittleEndian.AppendUint32(b, n)
	pw.block = b
	_, err := pw.w.Write(b)
	return err
}

// appendOption appends one option, padded to 4 bytes.
func appendOption(b []byte, code uint16, v []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	return appendPad(b, len(v))
}

func appendPad(b []byte, n int) []byte {
	for n%4 != 0 {
		b = append(b, 0)
		n++
	}
	return b
}

// ifaceID returns the interface block id of a device, writing the block
// the first time.
func (pw *pcapngWriter) ifaceID(k iface) (uint32, error) {
	if id, ok := pw.ifaces[k]; ok {
		return id, nil
	}
	id := uint32(len(pw.ifaces))
	pw.ifaces[k] = id
	b := pw.start(blockIDB)
	b = binary.LittleEndian.AppendUint16(b, linkEther)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint32(b, pw.snaplen)
	name := string(k.name[:max(0, bytes.IndexByte(k.name[:], 0))])
	if k.name[0] == 0 {
		name = "(none)"
	}
	b = appendOption(b, optIfName, []byte(name))
	b = appendOption(b, optIfDesc, []byte(fmt.Sprintf("%s ifindex %d netns %d", name, k.ifindex, k.netns)))
	b = appendOption(b, optIfTsres, []byte{9}) // nanoseconds
	b = appendOption(b, optEnd, nil)
	return id, pw.finish(b)
}

// frame writes one capture() record; where names its function.
func (pw *pcapngWriter) frame(rec []byte, where string) error {
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(rec[off:]) }
	caplen := int(u(codegen.CaptureLen))
	if len(rec) < codegen.CaptureHead+caplen {
		return fmt.Errorf("short capture record: %d bytes for %d of packet", len(rec), caplen)
	}
	k := iface{netns: uint32(u(codegen.CaptureNetns)), ifindex: uint32(u(codegen.CaptureIfindex))}
	copy(k.name[:15], rec[codegen.CaptureDev:])
	if i := bytes.IndexByte(k.name[:], 0); i >= 0 {
		clear(k.name[i:])
	}
	if err := pw.rotate(); err != nil {
		return err
	}
	id, err := pw.ifaceID(k)
	if err != nil {
		return err
	}
	pw.frames++
	data := rec[codegen.CaptureHead : codegen.CaptureHead+caplen]
	if synth := u(codegen.CaptureSynth); synth&0x10000 != 0 && caplen >= 14 {
		// No link header yet: an Ethernet header of the packet's type,
		// after the VLAN tag where there is one.
		clear(data[:12])
		at := 12
		if synth&codegen.CaptureTagged != 0 {
			at = 16
		}
		if caplen >= at+2 {
			binary.BigEndian.PutUint16(data[at:], uint16(synth))
		}
	}
	ts := uint64(pw.boot.Add(time.Duration(u(codegen.PrintTime))).UnixNano())
	b := pw.start(blockEPB)
	b = binary.LittleEndian.AppendUint32(b, id)
	b = binary.LittleEndian.AppendUint32(b, uint32(ts>>32))
	b = binary.LittleEndian.AppendUint32(b, uint32(ts))
	b = binary.LittleEndian.AppendUint32(b, uint32(caplen))
	origLen := max(u(codegen.CaptureOrigLen), uint64(caplen))
	if origLen > uint64(caplen) && pw.truncated != nil {
		pw.truncated.Add(1)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(origLen))
	b = append(b, data...)
	b = appendPad(b, caplen)
	c := append(append(pw.comment[:0], where...), " skb=0x"...)
	c = strconv.AppendUint(c, u(codegen.PrintSkb), 16)
	c = strconv.AppendUint(append(c, " mark=0x"...), uint64(uint32(u(codegen.CaptureMark))), 16)
	c = strconv.AppendUint(append(c, " netns="...), uint64(k.netns), 10)
	if id := u(codegen.CapturePacket); id != 0 {
		// A tracking script's: the hop's logical packet, which a
		// Wireshark filter on the comment selects across its skbs.
		c = strconv.AppendUint(append(c, " packet=0x"...), id, 16)
	}
	if n, ok := pw.vals.NetnsName(uint64(k.netns)); ok {
		c = appendNameComment(c, n)
	}
	pw.comment = c
	b = appendOption(b, optComment, c)
	b = appendOption(b, optEnd, nil)
	return pw.finish(b)
}

// appendNameComment appends what a hop's comment says of its network
// namespace's name: " pod=default/web-0 container=web", " container=podman:web"
// or " netns-name=blue".
func appendNameComment(c []byte, n Name) []byte {
	switch {
	case n.Pod != "":
		c = append(append(append(append(c, " pod="...), n.Namespace...), '/'), n.Pod...)
		if n.Container != "" {
			c = append(append(c, " container="...), n.Container...)
		}
	case n.Container != "":
		c = append(append(c, " container="...), n.Label...)
	case n.Label != "":
		c = append(append(c, " netns-name="...), strings.TrimPrefix(n.Label, "netns:")...)
	}
	return c
}

// Flush writes out what is buffered.
func (pw *pcapngWriter) Flush() error { return pw.w.Flush() }
