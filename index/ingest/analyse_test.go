package ingest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// syntheticTxs decodes blocks synthetic blocks of the workload (seed 1,
// 100 transactions a block, the scale run's defaults).
func syntheticTxs(tb testing.TB, blocks int) []*normalform.Tx {
	tb.Helper()
	sc, err := workload.LoadScenarios(filepath.Join("..", "..", "examples", "scenarios", "geth"))
	if err != nil {
		tb.Fatal(err)
	}
	gen, err := workload.New(sc, workload.Options{Seed: 1, BlockTxs: 100})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := normalform.DefaultConfig()
	var txs []*normalform.Tx
	for i := range blocks {
		res := trace.Decode(gen.Block().Bundle, trace.Options{Config: cfg, Source: fmt.Sprintf("block %d", i)})
		if len(res.Errors) > 0 {
			tb.Fatalf("block %d: %v", i, res.Errors[0])
		}
		txs = append(txs, res.Txs...)
	}
	return txs
}

// analysisDigest is SHA-256 over everything the analyser hands the writer
// for each transaction: the record's value (with fixed dictionary ids),
// its NF and the NF key's value, every key, and the block facts.
func analysisDigest(tb testing.TB, txs []*normalform.Tx) string {
	tb.Helper()
	g := &Ingester{opt: Options{Config: normalform.DefaultConfig(), Clock: func() time.Time { return time.Unix(0, 0) }}}
	h := sha256.New()
	id := layout.IDs{1, 2, 3, 4}
	var n [8]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for i, tx := range txs {
		r := g.analyse(task{slot: i, tx: tx})
		if r.failure != nil {
			put([]byte("failure: " + r.failure.Msg))
			continue
		}
		rec := r.entry.Rec
		e := rec.Parts()
		aid := make([]uint32, len(e.Dict)/20) // fixed ids: 5, 6, ...
		for i := range aid {
			aid[i] = uint32(5 + i)
		}
		enc := e.Join(id, aid)
		put(enc)
		put(e.Dict)
		put(rec.NF)
		put(rec.NFValue())
		for _, kv := range rec.Keys(enc, id) {
			put(kv.K)
			put(kv.V)
		}
		put([]byte(fmt.Sprintf("%+v", rec)))
		if r.entry.Facts != nil {
			put([]byte(fmt.Sprintf("%+v", *r.entry.Facts)))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestAnalyseOutputUnchanged: what the analysers give the writer for
// 3,000 synthetic transactions (records, NF, keys, block facts) is the
// same as at the branch point of issue 22's session-6 ingest work
// (4fad24e): the CPU work taken out of the analyser changes no byte.
// The digest includes %+v dumps of the record and the facts, which
// print fields in declaration order: s6-slope's Token (Addr, Kind, ID)
// changed them, and only them (the digest without the dumps is the same
// before and after that merge), so want was set again then. Schema 13
// (session 8) changed the record's value (dictionary addresses, with
// the fixed ids 5, 6, ... here), its profit keys (buckets; no net key
// equal to a gross one) and the Key's fields: want was set again.
func TestAnalyseOutputUnchanged(t *testing.T) {
	const want = "d5b38e4a63deebc9972eaacd11fef82517379a35debe2b57eff16adb0a281604"
	txs := syntheticTxs(t, 30)
	if len(txs) != 3000 {
		t.Fatalf("%d transactions, want 3000", len(txs))
	}
	if got := analysisDigest(t, txs); got != want {
		t.Fatalf("analysis digest %s, want %s", got, want)
	}
}

// TestAnalyseConcurrentSame: four analysers at once, sharing the
// encoders' and records' pooled scratch, give what one gives alone (run
// under -race too).
func TestAnalyseConcurrentSame(t *testing.T) {
	txs := syntheticTxs(t, 5)
	want := analysisDigest(t, txs)
	got := make([]string, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = analysisDigest(t, txs)
		}()
	}
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Errorf("analyser %d of 4 at once: digest %s, alone %s", i, g, want)
		}
	}
}

// BenchmarkAnalyseSynthetic is the analysers' work a transaction in the
// scale run (Analyze, NewRecord, NewEntry, block.FactsOf) without the
// decoder and Badger, over 2,000 synthetic transactions; CPU time a
// transaction (getrusage, the process) beside wall time.
//
//	go test ./index/ingest -run '^$' -bench AnalyseSynthetic -benchtime 5x -benchmem
func BenchmarkAnalyseSynthetic(b *testing.B) {
	txs := syntheticTxs(b, 20)
	g := &Ingester{opt: Options{Config: normalform.DefaultConfig(), Clock: time.Now}}
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		for j, tx := range txs {
			if r := g.analyse(task{slot: j, tx: tx}); r.failure != nil {
				b.Fatal(r.failure.Msg)
			}
		}
	}
	cpu := cputime.Process() - cpu0
	n := float64(b.N * len(txs))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/tx")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/tx")
}
