package k8stest

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// netnsInode is the inode of a process's network namespace: the number
// skbtrace reports for a pod (stat -L /proc/PID/ns/net).
func netnsInode(pid int) (uint64, error) {
	fi, err := os.Stat(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return 0, err
	}
	return fi.Sys().(*syscall.Stat_t).Ino, nil
}

// hostVeth is the host-side interface of a process's eth0: the one whose
// ifindex is eth0's iflink (link_index), read with ip in its namespace.
func hostVeth(pid int) (string, error) {
	out, err := run(10*time.Second, "nsenter", fmt.Sprintf("--net=/proc/%d/ns/net", pid), "ip", "-j", "link", "show", "eth0")
	if err != nil {
		return "", err
	}
	var links []struct {
		LinkIndex int `json:"link_index"`
	}
	if err := json.Unmarshal([]byte(out), &links); err != nil || len(links) != 1 || links[0].LinkIndex == 0 {
		return "", fmt.Errorf("no iflink for eth0 of pid %d in %q", pid, out)
	}
	ifc, err := net.InterfaceByIndex(links[0].LinkIndex)
	if err != nil {
		return "", fmt.Errorf("host interface %d (eth0's iflink of pid %d): %v", links[0].LinkIndex, pid, err)
	}
	return ifc.Name, nil
}
