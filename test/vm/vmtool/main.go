// Command vmtool is the guest side of skbtrace's VM suite (test/vm): it runs the
// case files against the skbtrace in the VM and sends the traffic they ask for.
// It is static and uses only the standard library, so it runs in a guest that has
// nothing but busybox.
//
//	vmtool run KERNEL CASE...     run case files on the kernel named KERNEL (6.1, 6.12)
//	vmtool send [-mark M] [-n N] [-sport P] [-tcp] ADDR:PORT [PAYLOAD]
//	                              UDP datagrams (or TCP connects) to ADDR:PORT, with SO_MARK
//	vmtool tcp [-n N] [-sport P] [-send B] [-reply B] [-abort] ADDR:PORT
//	                              N TCP sessions with a listener of its own on ADDR:PORT
//	vmtool backlog [-limit L] [-n N] ADDR:PORT
//	                              N connections queued on a listener that never accepts
//	vmtool nft HOOK accept|drop   table ip skbtrace_vm, a base chain on HOOK with that policy
//	vmtool nft delete             remove it
//	vmtool state                  the kernel's BPF and probe state, as the leak check sees it
//	vmtool check CASE...          parse case files and print them (no kernel needed)
//	vmtool recheck KERNEL CASE LOG
//	                              check a case's assertions against a run.sh log of it
package main

import (
	"fmt"
	"os"
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
	case "tcp":
		os.Exit(tcpSessions(args))
	case "backlog":
		os.Exit(backlog(args))
	case "nft":
		os.Exit(nft(args))
	case "state":
		fmt.Println(readKernelState())
	case "check":
		rc := 0
		for _, path := range args {
			c, err := parseCaseFile(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				rc = 1
				continue
			}
			fmt.Printf("%s: %d assertions, kernels %v\n", c.Name, len(c.Asserts), c.Kernels)
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
	fmt.Fprintln(os.Stderr, "usage: vmtool run KERNEL CASE... | send [-mark M] [-n N] [-sport P] [-tcp] ADDR:PORT [PAYLOAD] | tcp ... | backlog ... | nft HOOK accept|drop | nft delete | state | check CASE...")
	os.Exit(2)
}
