package main

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time (user + system) of the calling OS thread;
// the caller locks its goroutine to the thread (runtime.LockOSThread).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
