// Package cputime measures what the benchmarks and the workload commands
// report beside wall time: the process's CPU time (user + system, every
// thread, the garbage collector's workers included) and the machine's load
// average.
package cputime

import (
	"os"
	"strings"
)

// Load is the 1, 5 and 15 minute load averages ("0.52 0.58 0.59"), or
// "unknown" where /proc/loadavg cannot be read.
func Load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
