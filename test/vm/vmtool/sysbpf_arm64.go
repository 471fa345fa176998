package main

import "syscall"

// sysBPF is bpf(2)'s number.
const sysBPF = syscall.SYS_BPF
