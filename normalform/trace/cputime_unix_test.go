//go:build unix

package trace

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) the process has used so far,
// every thread counted: the garbage collector's workers too.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
