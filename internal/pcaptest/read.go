package pcaptest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
)

// ReadPcap returns the frames of a classic pcap file (little-endian, as
// tcpdump writes on this machine's architectures).
func ReadPcap(b []byte) ([][]byte, error) {
	if len(b) < 24 || (binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 && binary.LittleEndian.Uint32(b) != 0xa1b23c4d) {
		return nil, fmt.Errorf("not a little-endian pcap file")
	}
	frames := [][]byte{}
	for b = b[24:]; len(b) > 0; {
		if len(b) < 16 {
			return nil, fmt.Errorf("a record cut short")
		}
		n := int(binary.LittleEndian.Uint32(b[8:]))
		if len(b) < 16+n {
			return nil, fmt.Errorf("a record cut short")
		}
		frames = append(frames, b[16:16+n])
		b = b[16+n:]
	}
	return frames, nil
}

// TcpdumpFrames returns the frames of a pcap or pcapng file that tcpdump
// selects with filter (every frame where it is empty), as `tcpdump -r
// file -w - filter` writes them.
func TcpdumpFrames(file, filter string) ([][]byte, error) {
	if _, err := os.Stat(file); err != nil {
		return nil, err
	}
	cmd := exec.Command("tcpdump", "-r", file, "-w", "-", filter)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("tcpdump -r %s %q: %v: %s", file, filter, err, stderr.String())
	}
	frames, err := ReadPcap(out)
	if err != nil {
		return nil, fmt.Errorf("tcpdump -r %s %q: %v", file, filter, err)
	}
	return frames, nil
}
