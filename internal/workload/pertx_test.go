package workload_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// realInputs are every real transaction the repository holds (issue 22):
// the decoder's corpus (go-ethereum's callTracer fixtures, mev-inspect-rs'
// parity traces), the mainnet examples and the scenarios in both shapes
// (geth and parity). examples/scenarios/truth.json is the scenarios'
// expected answers, not a trace.
var realInputs = []string{
	"../../normalform/trace/testdata/corpus",
	"../../examples/mainnet",
	"../../examples/scenarios/geth",
	"../../examples/scenarios/parity",
}

// threadCPU is the CPU time of the calling OS thread
// (CLOCK_THREAD_CPUTIME_ID: nanoseconds, where getrusage counts ticks).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		panic(e)
	}
	return time.Duration(ts.Nano())
}

type txCost struct {
	name  string // file and transaction hash
	bytes int    // the input's size
	cpu   time.Duration
	wall  time.Duration
}

// TestPerTransactionCPU is the per-transaction figure of BENCHMARKS.md
// over every real transaction available: for each, the CPU time (of the
// locked thread, CLOCK_THREAD_CPUTIME_ID) and the wall time of what the ingest does to one
// decoded transaction (normalform.Analyze, the record, its encoding),
// the least of five runs; then P50, P99 and the maximum, each with the
// transaction that sets it. Decoding is per input, reported per input.
// It fails when an input yields no transaction or a decode error, so
// that the figure covers what it says it covers.
func TestPerTransactionCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("measures every real transaction five times")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cfg := normalform.DefaultConfig()
	var files []string
	for _, dir := range realInputs {
		err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".json") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var costs, decodes []txCost
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(f, "../../")
		var res *trace.Result
		dec := txCost{name: name, bytes: len(data), cpu: time.Hour, wall: time.Hour}
		for range 5 {
			c0, w0 := threadCPU(), time.Now()
			res = trace.Decode(data, trace.Options{Config: cfg, Source: f})
			dec.cpu, dec.wall = min(dec.cpu, threadCPU()-c0), min(dec.wall, time.Since(w0))
		}
		if len(res.Errors) > 0 || len(res.Txs) == 0 {
			t.Fatalf("%s: %d transactions, errors %v", name, len(res.Txs), res.Errors)
		}
		decodes = append(decodes, dec)
		for _, tx := range res.Txs {
			c := txCost{name: name + " " + tx.Meta.Hash.Hex(), bytes: len(data), cpu: time.Hour, wall: time.Hour}
			for range 5 {
				c0, w0 := threadCPU(), time.Now()
				a, err := normalform.Analyze(tx, cfg)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if tx.Meta.HasHash {
					rec, err := layout.NewRecord(a, 0)
					if err != nil {
						t.Fatalf("%s: %v", c.name, err)
					}
					e := rec.Parts()
					e.Join(layout.IDs{0, 1, 2, 3}, make([]uint32, len(e.Dict)/20))
				}
				c.cpu, c.wall = min(c.cpu, threadCPU()-c0), min(c.wall, time.Since(w0))
			}
			costs = append(costs, c)
		}
	}
	if len(costs) < 100 {
		t.Fatalf("only %d transactions found under %v", len(costs), realInputs)
	}
	report := func(what string, cs []txCost) {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].cpu < cs[j].cpu })
		at := func(p float64) txCost { return cs[int(p*float64(len(cs)-1)+0.5)] }
		for _, q := range []struct {
			label string
			c     txCost
		}{{"P50", at(0.5)}, {"P99", at(0.99)}, {"max", cs[len(cs)-1]}} {
			t.Logf("%s over %d: %s CPU %8.1f µs (wall %8.1f µs): %s (%d B input)", what, len(cs), q.label,
				float64(q.c.cpu.Nanoseconds())/1e3, float64(q.c.wall.Nanoseconds())/1e3, q.c.name, q.c.bytes)
		}
	}
	b, _ := os.ReadFile("/proc/loadavg")
	t.Logf("load average: %s; %d inputs, %d transactions; least of 5 runs each, CPU of the locked thread", strings.TrimSpace(string(b)), len(files), len(costs))
	report("analyse+record per transaction", costs)
	report("decode per input", decodes)
	if cs := costs; cs[len(cs)-1].cpu <= 0 {
		t.Fatal(fmt.Sprintf("no CPU time measured (max %v): CLOCK_THREAD_CPUTIME_ID unsupported?", cs[len(cs)-1].cpu))
	}
}
