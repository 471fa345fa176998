package main

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// ethtoolOps are the legacy ethtool ioctls that set one offload: what
// `ethtool -K DEV tso off` does, the guest having no ethtool binary.
var ethtoolOps = map[string]uint32{
	"tso": 0x1f, // ETHTOOL_STSO
	"gso": 0x24, // ETHTOOL_SGSO
	"gro": 0x2c, // ETHTOOL_SGRO
}

// ethtool sets an offload of a device: vmtool ethtool DEV tso|gso|gro
// on|off. It returns the exit status.
func ethtool(args []string) int {
	if len(args) != 3 || ethtoolOps[args[1]] == 0 || args[2] != "on" && args[2] != "off" {
		fmt.Fprintln(os.Stderr, "usage: vmtool ethtool DEV tso|gso|gro on|off")
		return 2
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtool ethtool: socket: %v\n", err)
		return 1
	}
	defer syscall.Close(fd)
	// struct ethtool_value { u32 cmd, data; }; struct ifreq { name[16];
	// ifr_data; }.
	val := [2]uint32{ethtoolOps[args[1]], 0}
	if args[2] == "on" {
		val[1] = 1
	}
	var ifr struct {
		name [16]byte
		data unsafe.Pointer
		_    [16]byte
	}
	copy(ifr.name[:15], args[0])
	ifr.data = unsafe.Pointer(&val)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), 0x8946, uintptr(unsafe.Pointer(&ifr))); e != 0 { // SIOCETHTOOL
		fmt.Fprintf(os.Stderr, "vmtool ethtool: %s %s %s: %v\n", args[0], args[1], args[2], e)
		return 1
	}
	return 0
}
