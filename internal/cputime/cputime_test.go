package cputime

import (
	"encoding/json"
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

// TestReference: the reference document is 1 MiB of valid JSON, and on
// Linux the reference measures some CPU time, ordered min <= median <= max.
func TestReference(t *testing.T) {
	if len(refDoc) != ReferenceBytes || !json.Valid(refDoc) {
		t.Fatalf("reference document: %d bytes, valid %v", len(refDoc), json.Valid(refDoc))
	}
	if runtime.GOOS != "linux" {
		t.Skip("the thread's CPU clock as on Linux")
	}
	r := Reference(5)
	if r.Passes != 5 || r.Min <= 0 || r.Min > r.Med || r.Med > r.Max {
		t.Errorf("Reference(5) = %+v", r)
	}
	if !strings.Contains(r.String(), "of 5;") {
		t.Errorf("String() = %q", r.String())
	}
}
