package gcfloor

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live, roots uint64
		want        int
	}{
		{0, 1 << 20, 100},        // no cycle yet: the default
		{5 << 20, 0, 1180},       // 5 MB live: the goal at 64 MB
		{5 << 20, 3 << 20, 737},  // and 3 MB of globals and stacks: 5 + 8 × 7.37 = 64 MB
		{16 << 20, 0, 300},       // 16 MB: 64 MB
		{32 << 20, 0, 100},       // half the floor: twice the live heap is the floor
		{30 << 20, 4 << 20, 100}, // the roots count: 30 + 34 = 64
		{400 << 20, 0, 100},      // an ingest's heap: untouched
		{Floor/2 - 1, 0, 100},    // just under half: the formula's 100, rounded down
	} {
		if got := percent(c.live, c.roots, Floor); got != c.want {
			t.Errorf("percent(%d, %d) = %d, want %d", c.live, c.roots, got, c.want)
		}
	}
}

var keep [][]byte

// churn allocates n bytes in 64 KB pieces, none kept, and returns the
// collector's cycles meanwhile.
func churn(n int) uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	for i := 0; i < n/(64<<10); i++ {
		b := make([]byte, 64<<10)
		b[0] = byte(i)
		keep = append(keep[:0], b)
	}
	runtime.ReadMemStats(&ms)
	return ms.NumGC - before
}

func gogc() uint64 { return metric("/gc/gogc:percent") }

func metric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestFloor: with a small live heap, the collector runs a few times over
// 512 MB of garbage with the floor where it ran dozens of times without
// it; with a live heap past half the floor, the percent goes back to 100.
func TestFloor(t *testing.T) {
	runtime.GC()
	without := churn(512 << 20)
	start(Floor)
	runtime.GC() // the finalizer's first tune after a cycle
	runtime.GC()
	with := churn(512 << 20)
	t.Logf("cycles over 512 MB: %d without the floor, %d with it; GOGC %d", without, with, gogc())
	// 512 MB through a 64 MB goal: about eight cycles, not none.
	if without < 30 || with*4 > without || with < 4 {
		t.Errorf("cycles over 512 MB: %d without the floor, %d with it: want a quarter or fewer, and at least 4", without, with)
	}
	if p, g := gogc(), metric("/gc/heap/goal:bytes"); p <= 100 || g < Floor*3/4 || g > Floor*5/4 {
		t.Errorf("GOGC %d, heap goal %d MB with a small live heap, want above 100 and the floor, %d MB", p, g>>20, Floor>>20)
	}
	big := make([]byte, 48<<20) // live: past half the floor
	for i := range big {
		big[i] = 1
	}
	runtime.GC()
	runtime.GC()
	runtime.GC()
	if p := gogc(); p != 100 {
		t.Errorf("GOGC %d with %d MB live, want 100", p, len(big)>>20)
	}
	runtime.KeepAlive(big)
}
