package index

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// writeStageInputs are the analyses of the stage benchmarks' two input
// sets (normalform/trace's BenchmarkStages): the corpus and the example
// scenarios.
func writeStageInputs(b *testing.B) []struct {
	name string
	as   []*normalform.Analysis
} {
	scen, err := filepath.Glob("../examples/scenarios/geth/*.json")
	if err != nil || len(scen) == 0 {
		b.Fatalf("no scenario bundles (%v)", err)
	}
	cfg := normalform.DefaultConfig()
	var scenarios []*normalform.Analysis
	for _, p := range scen {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		for _, tx := range trace.Decode(data, trace.Options{Config: cfg, Source: p}).Txs {
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			scenarios = append(scenarios, a)
		}
	}
	return []struct {
		name string
		as   []*normalform.Analysis
	}{{"corpus", analyseCorpus(b)}, {"scenarios", scenarios}}
}

// BenchmarkWriteStage is the index-write stage per transaction, beside
// BenchmarkStages' decode, rewrite, classify, hash and encode: each
// transaction written alone into a fresh index (Index.Put: the record —
// hashes, encodings, keys — then one Badger transaction with its reads
// and writes), and reports P50/P95/P99 (ns) of record (NewRecord) and
// write (PutRecord) per transaction. The ingest batches many transactions
// a Badger write: BenchmarkIngest is its throughput.
//
//	go test ./index -run '^$' -bench WriteStage -benchtime 20x
func BenchmarkWriteStage(b *testing.B) {
	for _, in := range writeStageInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			var rec, write []time.Duration
			for range b.N {
				b.StopTimer()
				ix, err := Open(filepath.Join(b.TempDir(), "index"))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for _, a := range in.as {
					t0 := time.Now()
					r, err := NewRecord(a, 0)
					if err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if err := ix.PutRecord(r); err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					rec, write = append(rec, t1.Sub(t0)), append(write, t2.Sub(t1))
				}
				b.StopTimer()
				ix.Close()
				b.StartTimer()
			}
			for _, s := range []struct {
				name string
				d    []time.Duration
			}{{"record", rec}, {"write", write}} {
				sort.Slice(s.d, func(i, j int) bool { return s.d[i] < s.d[j] })
				for _, q := range []struct {
					name string
					f    float64
				}{{"p50", 0.50}, {"p95", 0.95}, {"p99", 0.99}} {
					b.ReportMetric(float64(s.d[int(q.f*float64(len(s.d)-1))].Nanoseconds()), s.name+"-"+q.name+"-ns")
				}
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
