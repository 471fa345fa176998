package session

import "errors"

// NoKprobeMulti is bpftrace's --no-feature kprobe_multi: kprobe-multi
// links are not used even where the kernel has them, so auto takes fentry
// or kprobe and --backend kprobe-multi is refused.
var NoKprobeMulti bool

// errKprobeMultiOff is ProbeBackend's answer for kprobe-multi then.
var errKprobeMultiOff = errors.New("kprobe-multi links are turned off (--no-feature kprobe_multi)")
