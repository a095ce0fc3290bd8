package trace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/flowq/flowq/normalform"
)

// stageInputs are the two input sets of the stage benchmarks: the corpus
// (26 files, 149 transactions) and the example scenarios (one geth bundle
// per scenario).
func stageInputs(b *testing.B) []struct {
	name  string
	files [][]byte
} {
	scen, err := filepath.Glob("../../examples/scenarios/geth/*.json")
	if err != nil || len(scen) == 0 {
		b.Fatalf("no scenario bundles (%v)", err)
	}
	read := func(paths []string) [][]byte {
		var out [][]byte
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, data)
		}
		return out
	}
	return []struct {
		name  string
		files [][]byte
	}{{"corpus", read(corpusFiles(b))}, {"scenarios", read(scen)}}
}

// BenchmarkStages times each stage per transaction over the corpus and
// the scenarios and reports P50/P95/P99 (ns) per stage:
//
//   - decode: JSON bytes to T0 (a file's time shared equally among its
//     transactions: a block file decodes in one pass);
//
//   - rewrite: the kernel alone (normalform.Rewrite);
//
//   - classify: Analyze minus Rewrite on the same transaction, measured
//     back to back (recovery, promotion, profit, verdict);
//
//   - hash: canonical forms and the four hashes (Analysis.Hashes);
//
//   - encode: EncodeNF;
//
//   - verdict: decode + Analyze, trace bytes to verdict (issue 8's per
//     transaction target);
//
//   - total: the sum of the five for the transaction.
//
//     go test ./normalform/trace -run '^$' -bench Stages -benchtime 50x
func BenchmarkStages(b *testing.B) {
	cfg := normalform.DefaultConfig()
	for _, in := range stageInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			stages := []string{"decode", "rewrite", "classify", "hash", "encode", "verdict", "total"}
			lat := make([][]time.Duration, len(stages))
			for i := 0; i < b.N; i++ {
				for _, data := range in.files {
					start := time.Now()
					res := Decode(data, Options{Config: cfg})
					dec := time.Since(start)
					if len(res.Errors) != 0 {
						b.Fatal(res.Errors[0])
					}
					if len(res.Txs) == 0 {
						continue
					}
					dec /= time.Duration(len(res.Txs))
					for _, tx := range res.Txs {
						t0 := time.Now()
						if err := normalform.Rewrite(tx, cfg); err != nil {
							b.Fatal(err)
						}
						t1 := time.Now()
						a, err := normalform.Analyze(tx, cfg)
						if err != nil {
							b.Fatal(err)
						}
						t2 := time.Now()
						_ = a.Hashes()
						t3 := time.Now()
						_ = normalform.EncodeNF(a)
						t4 := time.Now()
						rw, an := t1.Sub(t0), t2.Sub(t1)
						cl := max(an-rw, 0)
						d := []time.Duration{dec, rw, cl, t3.Sub(t2), t4.Sub(t3)}
						d = append(d, dec+an, dec+an+d[3]+d[4])
						for s := range d {
							lat[s] = append(lat[s], d[s])
						}
					}
				}
			}
			b.StopTimer()
			for s, name := range stages {
				reportStage(b, name, lat[s])
			}
		})
	}
}

// reportStage reports a stage's P50, P95 and P99 in ns per transaction.
func reportStage(b *testing.B, name string, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Nanoseconds()) }
	b.ReportMetric(p(0.50), name+"-p50-ns")
	b.ReportMetric(p(0.95), name+"-p95-ns")
	b.ReportMetric(p(0.99), name+"-p99-ns")
}

// BenchmarkPipelineVsValid runs, in each iteration, encoding/json.Valid
// over every file of the input set and then the pipeline over the same
// bytes, and reports each one's time per transaction and their ratio
// (pipeline / Valid; issue 8's target is at most 1.0). "verdict" is trace
// bytes to verdict (Decode and Analyze); "full" adds the hashes and
// EncodeNF, everything the index stores but the write.
//
//	go test ./normalform/trace -run '^$' -bench PipelineVsValid -benchtime 50x
func BenchmarkPipelineVsValid(b *testing.B) {
	cfg := normalform.DefaultConfig()
	for _, in := range stageInputs(b) {
		for _, full := range []bool{false, true} {
			name := in.name + "/verdict"
			if full {
				name = in.name + "/full"
			}
			b.Run(name, func(b *testing.B) {
				var valid, pipe time.Duration
				txs := 0
				for i := 0; i < b.N; i++ {
					start := time.Now()
					for _, data := range in.files {
						if !json.Valid(data) {
							b.Fatal("invalid JSON")
						}
					}
					mid := time.Now()
					for _, data := range in.files {
						for _, tx := range Decode(data, Options{Config: cfg}).Txs {
							a, err := normalform.Analyze(tx, cfg)
							if err != nil {
								b.Fatal(err)
							}
							if full {
								_ = a.Hashes()
								_ = normalform.EncodeNF(a)
							}
							txs++
						}
					}
					valid += mid.Sub(start)
					pipe += time.Since(mid)
				}
				b.ReportMetric(float64(valid.Nanoseconds())/float64(txs), "valid-ns/tx")
				b.ReportMetric(float64(pipe.Nanoseconds())/float64(txs), "pipeline-ns/tx")
				b.ReportMetric(float64(pipe)/float64(valid), "ratio")
			})
		}
	}
}
