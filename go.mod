module github.com/skbtrace/skbtrace

go 1.26.8

require github.com/alecthomas/participle/v2 v2.1.4

require (
	github.com/cilium/ebpf v0.22.0 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	golang.org/x/sys v0.43.0 // indirect
)
