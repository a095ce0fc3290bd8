package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
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
	if raceBuild {
		t.Skip("allocation counts under -race (sync.Pool drops at random)")
	}
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

// syntheticFacts decodes and analyses blocks synthetic blocks and returns
// each block's transaction facts (what the writer's block findings read).
func syntheticFacts(tb testing.TB, blocks int) (nums []uint64, facts [][]*block.TxFacts) {
	tb.Helper()
	cfg := normalform.DefaultConfig()
	for i, bl := range syntheticBundles(tb, blocks) {
		res := trace.Decode(bl, trace.Options{Config: cfg, Source: fmt.Sprint(i)})
		if len(res.Errors) > 0 {
			tb.Fatalf("block %d: %v", i, res.Errors[0])
		}
		var fs []*block.TxFacts
		for _, tx := range res.Txs {
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				tb.Fatal(err)
			}
			fs = append(fs, block.FactsOf(a, cfg))
		}
		nums = append(nums, res.Txs[0].Meta.Block)
		facts = append(facts, fs)
	}
	return nums, facts
}

// TestBlockFindingsUnchanged: the block findings of 30 synthetic blocks
// (every report as JSON and as stored) are those of main at session 7's
// start (7bbb9eb): block.AnalyzeFacts' cheaper work changes no byte. The
// synthetic blocks hold swaps but no sandwich (their pools are fresh
// addresses); the sandwiches' order over pools is normalform/block's
// TestScenarioSandwich and TestMainnetBlock11017338.
func TestBlockFindingsUnchanged(t *testing.T) {
	const want = "fc183a521158b9471645d325e02ab057311518cd96e3914089c9b5a726283cdc"
	cfg := normalform.DefaultConfig()
	nums, facts := syntheticFacts(t, 30)
	h := sha256.New()
	swaps := 0
	for i, fs := range facts {
		r, err := block.AnalyzeFacts(nums[i], fs, cfg, len(fs))
		if err != nil {
			t.Fatal(err)
		}
		swaps += len(r.Swaps)
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(j)
		h.Write(r.AppendFindings(nil))
	}
	if swaps == 0 {
		t.Fatal("no swap in 30 synthetic blocks: the digest tests little")
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Fatalf("block findings digest %s, want %s (%d swaps)", got, want, swaps)
	}
}

// TestBlockFindingsAllocations: a synthetic block's findings from its
// facts (block.AnalyzeFacts, on the writer) allocate about what the
// report holds: not two address texts a comparison to sort its pools,
// nor a copy a swap, nor maps a pool, nor a transaction's hash text
// again for each of its swaps. 53.3 allocations a transaction before
// (7bbb9eb), 25.4 after.
func TestBlockFindingsAllocations(t *testing.T) {
	cfg := normalform.DefaultConfig()
	nums, facts := syntheticFacts(t, 4)
	i := 0
	per := testing.AllocsPerRun(20, func() {
		k := i % len(facts)
		if _, err := block.AnalyzeFacts(nums[k], facts[k], cfg, len(facts[k])); err != nil {
			t.Fatal(err)
		}
		i++
	}) / 100
	t.Logf("%.1f allocations a transaction", per)
	if per > 35 {
		t.Errorf("block findings of a synthetic block: %.1f allocations a transaction, want at most 35", per)
	}
}

// TestAnalyseAllocations: an analyser's work a synthetic transaction
// (Analyze, NewRecord, NewEntry, block.FactsOf) allocates what the
// record, its NF and the facts keep, and not, besides, the detector's
// witness tables and settled's tables, which a pool keeps from one
// transaction to the next (issue 22, session 7). 136.9 allocations a
// transaction before (7bbb9eb), 95.5 after (FactsOf's swaps gathered in
// pooled room too, amounts written without Int.Dec's string, Verify's
// amounts in one big.Int, canonical texts in a pooled buffer, chains'
// transfers walked without their list).
func TestAnalyseAllocations(t *testing.T) {
	if raceBuild {
		t.Skip("allocation counts under -race (sync.Pool drops at random)")
	}
	txs := syntheticTxs(t, 5)
	g := &Ingester{opt: Options{Config: normalform.DefaultConfig(), Clock: func() time.Time { return time.Unix(0, 0) }}}
	run := func() {
		for j, tx := range txs {
			if r := g.analyse(task{slot: j, tx: tx}); r.failure != nil {
				t.Fatal(r.failure.Msg)
			}
		}
	}
	run() // the pools warm
	per := testing.AllocsPerRun(3, run) / float64(len(txs))
	t.Logf("%.1f allocations a transaction", per)
	if per > 105 {
		t.Errorf("analysing a synthetic transaction: %.1f allocations, want at most 105", per)
	}
}
