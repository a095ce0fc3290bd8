package trace

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/flowq/flowq/normalform"
)

// BenchmarkBlockStages runs each stage alone over mainnet block 11017338,
// for profiling (-cpuprofile) or counting instructions (valgrind
// --tool=cachegrind, which no other work on the machine disturbs): valid
// is encoding/json.Valid, skip the scanner's validating skip, decode is
// JSON to T0 for the whole block, analyze is normalform.Analyze over its
// transactions.
//
//	go test ./normalform/trace -run '^$' -bench BlockStages/decode -cpuprofile cpu.out
func BenchmarkBlockStages(b *testing.B) {
	data, err := os.ReadFile("testdata/corpus/mev-inspect-rs/res/11017338.data.json")
	if err != nil {
		b.Fatal(err)
	}
	cfg := normalform.DefaultConfig()
	txs := Decode(data, Options{Config: cfg}).Txs
	b.Run("valid", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			if !json.Valid(data) {
				b.Fatal("invalid JSON")
			}
		}
	})
	b.Run("skip", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			s := newScanner(data, 0)
			if s.skip(); s.err != nil {
				b.Fatal(s.err.msg)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if r := Decode(data, Options{Config: cfg}); len(r.Errors) != 0 {
				b.Fatal(r.Errors[0])
			}
		}
	})
	b.Run("analyze", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for _, tx := range txs {
				if _, err := normalform.Analyze(tx, cfg); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
