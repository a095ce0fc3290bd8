// Package gcfloor gives a process's collector a heap floor: while the
// live heap is small, the collector lets the heap grow to Floor before it
// runs, instead of to twice the live heap.
//
// Why: a query's scan allocates as it goes (a million-record find makes
// about 94 MB, most of it row texts and Badger blocks) over a live heap
// of about 5 MB, and with GOGC=100 the collector ran every 6 MB or so: 25 cycles a
// find, each with its own mark phase, write barriers on for a fifth of
// the find's wall time, and its sweeping. A floor of 64 MB makes that
// two or three. A process whose live heap is large already (an ingest:
// Badger's memtables, hundreds of MB) is left as GOGC=100 leaves it: the
// floor only ever raises the goal of a heap smaller than half of it, so
// it costs at most Floor of memory.
//
// The percent is set after each cycle (a finalizer re-armed every cycle
// reads the live heap, runtime/metrics, and calls debug.SetGCPercent).
// A GOGC set in the environment is the user's choice and is left alone.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Floor is the heap goal the collector is given at least.
const Floor = 64 << 20

var once sync.Once

// Start keeps the heap goal at Floor or more for the rest of the
// process, unless GOGC is set in the environment. Calls after the first
// do nothing.
func Start() {
	once.Do(func() {
		if _, set := os.LookupEnv("GOGC"); set {
			return
		}
		start(Floor)
	})
}

func start(floor uint64) {
	t := &tuner{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/globals:bytes"}, {Name: "/gc/scan/stack:bytes"}}}
	t.tune()
	t.arm()
}

type tuner struct {
	floor  uint64
	sample []metrics.Sample
	pct    int
}

// sentinel is what the collector finds unreachable once a cycle (an
// object with a pointer: never in a tiny block shared with others).
type sentinel struct{ t *tuner }

func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{t: t}, func(s *sentinel) {
		s.t.tune()
		s.t.arm()
	})
}

// percent is the GOGC that puts the heap goal at floor, or 100 when the
// goal GOGC=100 gives is past the floor already. The collector's goal is
// the live heap and GOGC percent of the live heap and the roots it scans
// (globals and stacks), and never under GOGC percent of 4 MB (the
// runtime's heap minimum): for a heap so small that the first would ask
// for more, the second alone puts the goal at the floor.
func percent(live, roots, floor uint64) int {
	if live == 0 || 2*live+roots >= floor {
		return 100
	}
	p := (floor - live) * 100 / (live + roots)
	return int(min(p, floor*100/heapMinimum))
}

// heapMinimum is the runtime's heap goal at GOGC=100 for the smallest
// heaps (runtime.defaultHeapMinimum).
const heapMinimum = 4 << 20

func (t *tuner) tune() {
	metrics.Read(t.sample)
	var v [3]uint64
	for i, s := range t.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	if p := percent(v[0], v[1]+v[2], t.floor); p != t.pct {
		t.pct = p
		debug.SetGCPercent(p)
	}
}
