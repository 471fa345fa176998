package main

// sysBPF is bpf(2)'s number (the syscall package has none for amd64).
const sysBPF = 321
