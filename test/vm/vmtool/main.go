// Command vmtool is the guest side of skbtrace's VM suite (test/vm): it runs the
// case files against the skbtrace in the VM and sends the traffic they ask for.
// It is static and uses only the standard library, so it runs in a guest that has
// nothing but busybox.
//
//	vmtool run KERNEL CASE...     run case files on this kernel, which run.sh calls KERNEL (its -k spec)
//	vmtool env [KERNEL]           the environment case conditions are decided on (VMENV ...);
//	                              KERNEL defaults to /vm/kernel (run.sh's -k spec)
//	vmtool send [-mark M] [-n N] [-sport P [-saddr A]] [-tcp] [-timeout D] ADDR:PORT [PAYLOAD]
//	                              UDP datagrams (or TCP connects) to ADDR:PORT, with SO_MARK
//	vmtool tcp [-n N] [-sport P] [-send B] [-reply B] [-abort] ADDR:PORT
//	                              N TCP sessions with a listener of its own on ADDR:PORT
//	vmtool backlog [-limit L] [-n N] ADDR:PORT
//	                              N connections queued on a listener that never accepts
//	vmtool nft [FAMILY] HOOK accept|drop
//	                              table FAMILY (ip, ip6, inet; default ip) skbtrace_vm,
//	                              a base chain on HOOK with that policy
//	vmtool nft [FAMILY] delete    remove it
//	vmtool link add NAME type veth peer PEER [netns FILE]
//	vmtool link add NAME type vxlan|geneve id VNI remote ADDR [local ADDR] [dstport PORT]
//	                              devices busybox's ip cannot make (a peer in a namespace
//	                              file, a tunnel's VNI, addresses and port)
//	vmtool tc add DEV ingress|egress PREF flower|u32 PORT|matchall drop|police RATE BURST|mirred TARGET
//	vmtool tc clear DEV           classic tc filters and actions without the tc binary (tc.go)
//	vmtool pcapcheck [-min N] FILE PORT
//	vmtool packetcheck [-segments N] [-fragments N] [-merges N] [-reassembled N] [-blocks N] FILE
//	vmtool ethtool DEV tso|gso|gro on|off
//	                              check vmtool tcp's bytes to PORT in a pcapng skbtrace wrote
//	vmtool state                  the kernel's BPF and probe state, as the leak check sees it
//	vmtool flood [-n N] ADDR:PORT   N datagrams from one socket, as fast as it goes (bench/vm)
//	vmtool progstats              the BPF run-time statistics of every program, summed (bench/vm)
//	vmtool check CASE...          parse case files and print them (no kernel needed)
//	vmtool recheck KERNEL CASE LOG
//	                              check a case's assertions against a run.sh log of it
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "run":
		if len(args) < 2 {
			usage()
		}
		os.Exit(runCases(os.Stdout, args[0], args[1:]))
	case "send":
		os.Exit(send(args))
	case "flood":
		os.Exit(flood(args))
	case "tcp":
		os.Exit(tcpSessions(args))
	case "backlog":
		os.Exit(backlog(args))
	case "nft":
		os.Exit(nft(args))
	case "link":
		os.Exit(link(args))
	case "tc":
		os.Exit(tc(args))
	case "ethtool":
		os.Exit(ethtool(args))
	case "packetcheck":
		os.Exit(packetCheck(args))
	case "pcapcheck":
		os.Exit(pcapCheck(args))
	case "state":
		fmt.Println(readKernelState())
	case "progstats":
		os.Exit(progStats())
	case "env":
		// run.sh writes the -k spec to /vm/kernel.
		b, _ := os.ReadFile("/vm/kernel")
		label := strings.TrimSpace(string(b))
		if len(args) > 0 {
			label = args[0]
		}
		env, err := guestEnv(label)
		fmt.Println(env)
		if err != nil {
			fmt.Fprintf(os.Stderr, "vmtool: no BTF names: %v\n", err)
		}
	case "check":
		rc := 0
		for _, path := range args {
			c, err := parseCaseFile(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				rc = 1
				continue
			}
			k := "all"
			if c.Kernels != nil {
				k = c.Kernels.Text
			}
			fmt.Printf("%s: %d assertions, kernels %s\n", c.Name, len(c.Asserts), k)
		}
		os.Exit(rc)
	case "recheck":
		if len(args) != 3 {
			usage()
		}
		os.Exit(recheck(os.Stdout, args[0], args[1], args[2]))
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: vmtool run KERNEL CASE... | env [KERNEL] | send [-mark M] [-n N] [-sport P [-saddr A]] [-tcp] [-timeout D] ADDR:PORT [PAYLOAD] | tcp ... | backlog ... | nft [FAMILY] HOOK accept|drop | nft [FAMILY] delete | link add NAME type veth|vxlan|geneve ... | flood [-n N] ADDR:PORT | state | progstats | check CASE...")
	os.Exit(2)
}
