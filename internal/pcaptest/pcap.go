package pcaptest

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
)

// WritePcap writes frames as a classic pcap file (Ethernet), one second
// apart, whole.
func WritePcap(w io.Writer, frames [][]byte) error {
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 65535)
	binary.LittleEndian.PutUint32(hdr[20:], 1) // LINKTYPE_ETHERNET
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	for i, f := range frames {
		rec := make([]byte, 16)
		binary.LittleEndian.PutUint32(rec[0:], uint32(1_700_000_000+i))
		binary.LittleEndian.PutUint32(rec[8:], uint32(len(f)))
		binary.LittleEndian.PutUint32(rec[12:], uint32(len(f)))
		if _, err := w.Write(append(rec, f...)); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes Frames to a pcap file named name in dir and returns
// its path.
func WriteFile(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := WritePcap(f, Frames()); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}
