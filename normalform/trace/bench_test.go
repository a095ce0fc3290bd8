package trace

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/normalform"
)

// corpusInputs loads every corpus file and counts its transactions.
func corpusInputs(b *testing.B) (files [][]byte, txs, bytes int) {
	cfg := normalform.DefaultConfig()
	for _, f := range corpusFiles(b) {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
		txs += len(Decode(data, Options{Config: cfg}).Txs)
		bytes += len(data)
	}
	return files, txs, bytes
}

// BenchmarkDecodeCorpus decodes the whole corpus (150 transactions, 4.0 MB)
// per iteration: JSON to T0, trimming included. It reports ns per
// transaction; b.SetBytes makes the MB/s column the input throughput.
//
//	go test ./normalform/trace -run '^$' -bench Corpus -benchmem -count 5
func BenchmarkDecodeCorpus(b *testing.B) {
	files, txs, n := corpusInputs(b)
	cfg := normalform.DefaultConfig()
	b.SetBytes(int64(n))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		for _, data := range files {
			if r := Decode(data, Options{Config: cfg}); len(r.Errors) != 0 {
				b.Fatal(r.Errors[0])
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*txs), "ns/tx")
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N*txs), "cpu-ns/tx")
}

// BenchmarkJSONValidCorpus is the yardstick of issue 8: the standard library
// merely validating the same bytes.
func BenchmarkJSONValidCorpus(b *testing.B) {
	files, txs, n := corpusInputs(b)
	b.SetBytes(int64(n))
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		for _, data := range files {
			if !json.Valid(data) {
				b.Fatal("invalid")
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*txs), "ns/tx")
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N*txs), "cpu-ns/tx")
}

// BenchmarkJSONUnmarshalCorpus: encoding/json into any, which the paper's
// whole pipeline costs about as much as.
func BenchmarkJSONUnmarshalCorpus(b *testing.B) {
	files, txs, n := corpusInputs(b)
	b.SetBytes(int64(n))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		for _, data := range files {
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*txs), "ns/tx")
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N*txs), "cpu-ns/tx")
}
