package trace

import (
	"bytes"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/normalform"
)

// TestEngineProperties: on every corpus transaction, the normal form
// preserves T0's transfers, the annotation loop stays within 3n-2 passes,
// and a second analysis is identical.
func TestEngineProperties(t *testing.T) {
	cfg := normalform.DefaultConfig()
	n := 0
	for _, f := range corpusFiles(t) {
		data, _ := os.ReadFile(f)
		for _, tx := range Decode(data, Options{Config: cfg}).Txs {
			if err := normalform.CheckProperties(tx, cfg); err != nil {
				t.Errorf("%s tx %s: %v", f, tx.Meta.Hash.Hex(), err)
			}
			n++
		}
	}
	if n != 149 {
		t.Errorf("checked %d transactions, the corpus has 149", n)
	}
}

// BenchmarkAnalyzeCorpus rewrites, classifies and prices every corpus
// transaction (decoding excluded) and reports the per-transaction latency
// distribution.
//
//	go test ./normalform/trace -run '^$' -bench AnalyzeCorpus -benchtime 200x
func BenchmarkAnalyzeCorpus(b *testing.B) {
	cfg := normalform.DefaultConfig()
	var txs []*normalform.Tx
	for _, f := range corpusFiles(b) {
		data, _ := os.ReadFile(f)
		txs = append(txs, Decode(data, Options{Config: cfg}).Txs...)
	}
	lat := make([]time.Duration, 0, b.N*len(txs))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, tx := range txs {
			start := time.Now()
			if _, err := normalform.Analyze(tx, cfg); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkPipelineCorpus: trace bytes to verdict (decode and analyze),
// per file, with the per-transaction distribution.
//
//	go test ./normalform/trace -run '^$' -bench PipelineCorpus -benchtime 200x
func BenchmarkPipelineCorpus(b *testing.B) {
	cfg := normalform.DefaultConfig()
	files, txs, n := corpusInputs(b)
	b.SetBytes(int64(n))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		for _, data := range files {
			for _, tx := range Decode(data, Options{Config: cfg}).Txs {
				if _, err := normalform.Analyze(tx, cfg); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*txs), "ns/tx")
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N*txs), "cpu-ns/tx")
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Nanoseconds()) }
	b.ReportMetric(p(0.50), "p50-ns/tx")
	b.ReportMetric(p(0.95), "p95-ns/tx")
	b.ReportMetric(p(0.99), "p99-ns/tx")
	b.ReportMetric(p(1), "max-ns/tx")
}

// TestEncodeCorpus: every corpus analysis survives EncodeNF/DecodeNF with
// the same bytes, rendering and hashes.
func TestEncodeCorpus(t *testing.T) {
	cfg := normalform.DefaultConfig()
	for _, f := range corpusFiles(t) {
		data, _ := os.ReadFile(f)
		for _, tx := range Decode(data, Options{Config: cfg}).Txs {
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			enc := normalform.EncodeNF(a)
			b, err := normalform.DecodeNF(enc)
			if err != nil {
				t.Fatalf("%s: %v", tx.Meta.Hash.Hex(), err)
			}
			if !bytes.Equal(normalform.EncodeNF(b), enc) || a.Hashes() != b.Hashes() {
				t.Errorf("%s: round trip differs", tx.Meta.Hash.Hex())
			}
		}
	}
}
