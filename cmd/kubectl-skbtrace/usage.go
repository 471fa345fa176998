package main

import (
	"fmt"
	"io"
	"strings"
)

// usageText is the top of --help; the flags follow it.
const usageText = `kubectl skbtrace traces a pod's or a node's packets with skbtrace, in a
short-lived pod on the node, and removes that pod when the trace ends.

Usage:
  kubectl skbtrace pod/NAME [-n NS] [flags] [-- SKBTRACE ARGS...]
  kubectl skbtrace pod/NAME [-n NS] [flags] TOOL
  kubectl skbtrace node/NAME [flags] -e PROGRAM
  kubectl skbtrace node/NAME [flags] [TOOL] [-- SKBTRACE ARGS...]
  kubectl skbtrace version
(pod NAME and a bare NAME mean pod/NAME.)

For a pod, skbtrace runs on the pod's node with --pod NS/NAME: only the
pod's packets are traced. For a node, every packet of the node. TOOL is
one of skbtrace's bundled tools (skbtrace --tools), such as whydrop.

Examples:
  kubectl skbtrace pod/web-0 -- --filter 'tcp port 80'
  kubectl skbtrace pod/web-0 -n shop whydrop
  kubectl skbtrace pod/web-0 -w web.pcapng -- --filter 'udp' --duration 10s
  kubectl skbtrace node/worker-1 -e 'skb:kfree_skb { @[reason] = count() }'

Ctrl-C ends the trace: skbtrace gets --stop-grace to print its maps,
then the pod is removed. The exit code is skbtrace's.

The trace pod needs hostPID, hostNetwork, hostPath mounts and the
capabilities BPF, PERFMON, SYSLOG, SYS_RESOURCE and SYS_PTRACE: the trace
namespace's Pod Security level must be privileged. The user needs
create/get/list/watch/delete on pods, get on pods/log and create on
pods/attach (-w) there: deploy/kubectl-skbtrace/rbac.yaml.

Flags:
`

// usage prints the help: the forms, then every flag.
func usage(w io.Writer) {
	var o options
	fs := newFlagSet(&o)
	fmt.Fprint(w, usageText)
	fmt.Fprint(w, strings.TrimRight(fs.FlagUsages(), "\n")+"\n")
}
