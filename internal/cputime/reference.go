package cputime

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"time"
)

// The reference: a fixed piece of CPU work that the workload commands
// (scale, findprof) time before and after their own, in the same
// process, so that a figure of one run can be read against the speed
// the machine had then. This machine's speed has moved by a factor of
// two between days with the same binary and the same workload, and by a
// third within minutes (BENCHMARKS.md); a figure and the reference
// measured beside it move together when the machine does, and apart
// when the code does.
//
// The work is encoding/json.Valid over a fixed document of 1 MiB built
// here (objects of hex strings and numbers, as traces are): no file, no
// allocation while timed, the same bytes in every build.

// ReferenceBytes is the size of the reference document.
const ReferenceBytes = 1 << 20

var refDoc = func() []byte {
	b := []byte(`{"calls":[`)
	x := uint64(0x9e3779b97f4a7c15)
	for i := 0; len(b) < ReferenceBytes-256; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b = append(b, `{"from":"0x`...)
		b = fmt.Appendf(b, "%016x%016x%08x", x, x*31, uint32(x>>7))
		b = append(b, `","value":"0x`...)
		b = strconv.AppendUint(b, x>>20, 16)
		b = append(b, `","gas":`...)
		b = strconv.AppendUint(b, x%30_000_000, 10)
		b = append(b, `,"input":"0x`...)
		b = fmt.Appendf(b, "%016x", x^0x5a5a5a5a5a5a5a5a)
		b = append(b, `"}`...)
	}
	b = append(b, `]}`...)
	for len(b) < ReferenceBytes {
		b = append(b, ' ')
	}
	return b[:ReferenceBytes]
}()

// Ref is a reference measurement: the CPU time of one pass over the
// document, min, median and max of Passes.
type Ref struct {
	Passes        int
	Min, Med, Max time.Duration
	Load          string // the load average when it was taken
}

// String is "json.Valid over 1 MiB: 812/830/901 µs of CPU a pass (min/median/max of 21; load 0.41 0.52 0.60)".
func (r Ref) String() string {
	if r.Passes == 0 {
		return "not measured on this system"
	}
	us := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 0, 64) }
	return fmt.Sprintf("json.Valid over 1 MiB: %s/%s/%s µs of CPU a pass (min/median/max of %d; load %s)",
		us(r.Min), us(r.Med), us(r.Max), r.Passes, r.Load)
}

// Reference times passes of the reference work on the calling goroutine's
// thread (locked to it meanwhile). The zero Ref where the thread's CPU
// time cannot be read.
func Reference(passes int) Ref {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if Thread() == 0 || passes <= 0 {
		return Ref{}
	}
	ts := make([]time.Duration, passes)
	for i := range ts {
		t0 := Thread()
		if !json.Valid(refDoc) {
			return Ref{} // cannot be: TestReference
		}
		ts[i] = Thread() - t0
	}
	slices.Sort(ts)
	return Ref{Passes: passes, Min: ts[0], Med: ts[passes/2], Max: ts[passes-1], Load: Load()}
}
