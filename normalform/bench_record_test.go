package normalform_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// BenchmarkRecordPath is what ingest asks of this package per transaction
// (issue 22): Analyze, then the normal form's hashes (layout.NewRecord
// calls Analysis.Hashes), over the 149 corpus transactions and, as a
// sub-benchmark, mainnet block 11017338 alone. It reports CPU time per
// transaction (cpu-ns/tx) beside wall time, and allocations.
//
//	go test ./normalform -run '^$' -bench RecordPath -benchtime 200x -benchmem
func BenchmarkRecordPath(b *testing.B) {
	cfg := normalform.DefaultConfig()
	corpus, _ := filepath.Glob("trace/testdata/corpus/*/*/*.json")
	for _, set := range []struct {
		name  string
		files []string
	}{
		{"corpus", corpus},
		{"block11017338", []string{"trace/testdata/corpus/mev-inspect-rs/res/11017338.data.json"}},
	} {
		var txs []*normalform.Tx
		for _, f := range set.files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			txs = append(txs, trace.Decode(data, trace.Options{Config: cfg}).Txs...)
		}
		if len(txs) == 0 {
			b.Fatalf("%s: no transactions", set.name)
		}
		for _, part := range []string{"analyze", "analyze+hashes"} {
			b.Run(set.name+"/"+part, func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cputime.Process()
				for i := 0; i < b.N; i++ {
					for _, tx := range txs {
						a, err := normalform.Analyze(tx, cfg)
						if err != nil {
							b.Fatal(err)
						}
						if part != "analyze" {
							_ = a.Hashes()
						}
					}
				}
				cpu := cputime.Process() - cpu0
				n := float64(b.N * len(txs))
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/tx")
				b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/tx")
			})
		}
	}
}
