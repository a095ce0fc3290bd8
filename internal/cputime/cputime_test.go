package cputime

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestProcessCounts: spinning for 50 ms of wall time adds CPU time, and
// the load average has three fields on Linux.
func TestProcessCounts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("getrusage and /proc/loadavg as on Linux")
	}
	before := Process()
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	if d := Process() - before; d <= 0 {
		t.Errorf("CPU time did not grow while spinning (%d iterations): %v", x, d)
	}
	if f := strings.Fields(Load()); len(f) != 3 {
		t.Errorf("Load() = %q, want three averages", Load())
	}
}
