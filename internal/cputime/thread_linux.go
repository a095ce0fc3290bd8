package cputime

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPUTime = 3

// Thread is the CPU time of the calling OS thread, to the nanosecond
// (clock_gettime; getrusage's figure for a thread is kept in ticks); the
// caller locks its goroutine to the thread (runtime.LockOSThread). 0 when
// it cannot be read.
func Thread() time.Duration {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
