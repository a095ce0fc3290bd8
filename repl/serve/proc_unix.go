//go:build linux || darwin || freebsd

package serve

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this id runs on this host.
func processAlive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
