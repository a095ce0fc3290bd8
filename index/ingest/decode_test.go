package ingest

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// syntheticBundles returns blocks synthetic bundles (seed 1, 100
// transactions a block: the scale run's).
func syntheticBundles(tb testing.TB, blocks int) [][]byte {
	tb.Helper()
	sc, err := workload.LoadScenarios(filepath.Join("..", "..", "examples", "scenarios", "geth"))
	if err != nil {
		tb.Fatal(err)
	}
	gen, err := workload.New(sc, workload.Options{Seed: 1, BlockTxs: 100})
	if err != nil {
		tb.Fatal(err)
	}
	out := make([][]byte, blocks)
	for i := range out {
		out[i] = gen.Block().Bundle
	}
	return out
}

// TestDecodeSyntheticAllocations: decoding a synthetic block, once the
// decoders' pools are warm, allocates what its transactions keep (their
// T0, transfers and metadata) and not, besides, an object per call frame,
// per receipt and per growing list of logs or children (issue 22: those
// came back from the pools' chunks). 100 transactions of 17 call frames
// took 46.2 allocations a transaction before, 5.8 after.
func TestDecodeSyntheticAllocations(t *testing.T) {
	bundles := syntheticBundles(t, 4)
	cfg := normalform.DefaultConfig()
	i := 0
	decode := func() {
		res := trace.Decode(bundles[i%len(bundles)], trace.Options{Config: cfg, Source: "synthetic"})
		if len(res.Errors) > 0 || len(res.Txs) != 100 {
			t.Fatalf("block %d: %d transactions, errors %v", i, len(res.Txs), res.Errors)
		}
		i++
	}
	for range 8 {
		decode() // the pools warm
	}
	per := testing.AllocsPerRun(20, decode) / 100
	t.Logf("%.1f allocations a transaction", per)
	if per > 10 {
		t.Errorf("decoding a synthetic block: %.1f allocations a transaction, want at most 10", per)
	}
}

// BenchmarkDecodeSynthetic is the decoders' work a transaction in the
// scale run (trace.Decode of 20 synthetic blocks of 100 transactions),
// CPU time a transaction (getrusage, the process: the collector
// included) beside wall time.
//
//	go test ./index/ingest -run '^$' -bench DecodeSynthetic -benchtime 20x -benchmem
func BenchmarkDecodeSynthetic(b *testing.B) {
	bundles := syntheticBundles(b, 20)
	cfg := normalform.DefaultConfig()
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		for j, bl := range bundles {
			if res := trace.Decode(bl, trace.Options{Config: cfg, Source: fmt.Sprint(j)}); len(res.Errors) > 0 {
				b.Fatal(res.Errors[0])
			}
		}
	}
	cpu := cputime.Process() - cpu0
	n := float64(b.N * len(bundles) * 100)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/tx")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/tx")
}
