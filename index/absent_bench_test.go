package index

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// BenchmarkBatchesWrite is the write stage alone (issue 22): 20,000
// synthetic transactions, decoded, analysed and encoded beforehand,
// written by Batches in 256-transaction writes into a fresh index, with
// the reads a fresh index's batches skip (absent.go) made ("reads") or
// not ("fresh"). It reports the process's CPU a transaction.
//
//	go test ./index -run '^$' -bench BatchesWrite -benchtime 3x -count 3
func BenchmarkBatchesWrite(b *testing.B) {
	sc, err := workload.LoadScenarios(filepath.Join("..", "examples", "scenarios", "geth"))
	if err != nil {
		b.Fatal(err)
	}
	gen, err := workload.New(sc, workload.Options{Seed: 1, BlockTxs: 100})
	if err != nil {
		b.Fatal(err)
	}
	cfg := normalform.DefaultConfig()
	var recs []*Record
	for len(recs) < 20000 {
		res := trace.Decode(gen.Block().Bundle, trace.Options{Config: cfg})
		for _, tx := range res.Txs {
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			rec, err := NewRecord(a, 0)
			if err != nil {
				b.Fatal(err)
			}
			recs = append(recs, rec)
		}
	}
	for _, mode := range []string{"reads", "fresh"} {
		b.Run(mode, func(b *testing.B) {
			var cpu int64
			for range b.N {
				b.StopTimer()
				ix, err := Open(filepath.Join(b.TempDir(), "index"))
				if err != nil {
					b.Fatal(err)
				}
				w, err := ix.Batches(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				if mode == "reads" {
					w.abs = nil
				}
				ops := make([]Op, 0, 257)
				entries := make([]*Entry, len(recs))
				for i, r := range recs {
					entries[i] = NewEntry(r)
				}
				b.StartTimer()
				c0 := cputime.Process()
				for i := 0; i < len(entries); i += 256 {
					fin := &Finish{Name: fmt.Sprintf("bench:%d", i)}
					ops = ops[:0]
					for _, e := range entries[i:min(i+256, len(entries))] {
						ops = append(ops, Op{Entry: e, Owner: fin})
						fin.Txs++
					}
					ops = append(ops, Op{Fin: fin})
					if err := w.Write(ops); err != nil {
						b.Fatal(err)
					}
				}
				cpu += int64(cputime.Process() - c0)
				b.StopTimer()
				ix.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu)/1e3/float64(b.N*len(recs)), "cpu-µs/tx")
		})
	}
}
