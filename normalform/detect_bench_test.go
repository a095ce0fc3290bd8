package normalform_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
	"github.com/flowq/flowq/normalform/trace"
)

// The cost of the stage after the fixpoint (detect.go, settle.go). The
// stage cannot be switched off, so it is measured as the difference
// between these benchmarks here and the same file run at commit e08599a,
// before the stage (it uses nothing e08599a lacks). BENCHMARKS.md, "The
// stage after the fixpoint", has the commands and the figures.
//
//	go test ./normalform -run '^$' -bench 'Stage' -benchtime 20x

// analyzeAll analyses txs b.N times and reports wall and CPU time per
// transaction (ns/tx, cpu-ns/tx).
func analyzeAll(b *testing.B, txs []*normalform.Tx) {
	cfg := normalform.DefaultConfig()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		for _, tx := range txs {
			if _, err := normalform.Analyze(tx, cfg); err != nil {
				b.Fatal(err)
			}
		}
	}
	cpu := cputime.Process() - cpu0
	b.StopTimer()
	n := float64(b.N * len(txs))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/tx")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/tx")
}

// BenchmarkStageCorpus analyses the 149 corpus transactions (decoding
// excluded) per iteration.
func BenchmarkStageCorpus(b *testing.B) {
	cfg := normalform.DefaultConfig()
	files, _ := filepath.Glob("trace/testdata/corpus/*/*/*.json")
	var txs []*normalform.Tx
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		txs = append(txs, trace.Decode(data, trace.Options{Config: cfg}).Txs...)
	}
	if len(txs) != 149 {
		b.Fatalf("%d corpus transactions, want 149", len(txs))
	}
	analyzeAll(b, txs)
}

// BenchmarkStageGrowth2000 analyses the 2,000-transfer growth shapes.
func BenchmarkStageGrowth2000(b *testing.B) {
	for _, sh := range gen.Shapes {
		tx := sh.Build(2000, 1)
		b.Run(sh.Name, func(b *testing.B) { analyzeAll(b, []*normalform.Tx{tx}) })
	}
}

// manyTokenStar is gen.StarTx with a token of its own per arm (StarTx
// cycles through 64): n/2 distinct tokens, for costs that grow with the
// number of tokens a coalition touches.
func manyTokenStar(n int) *normalform.Tx {
	b := &gen.Builder{}
	var kids []*normalform.Node
	for i := 0; len(kids)*2 < n; i++ {
		pool, tok := fmt.Sprintf("ManyPool%d", i), fmt.Sprintf("ManyTok%d", i)
		kids = append(kids, b.F("SC", pool,
			b.T("SC", pool, fmt.Sprint(1+i%100), "WETH", "SC"),
			b.F(pool, "SC", b.F("SC", tok, b.T(pool, "SC", fmt.Sprint(1+i%1000), tok, pool))),
			b.Static(pool, tok)))
	}
	return b.Tx("EOA", "SC", 21000, b.F("EOA", "SC", kids...))
}

// BenchmarkStageManyTokens analyses manyTokenStar at growing sizes.
func BenchmarkStageManyTokens(b *testing.B) {
	for _, n := range []int{500, 1000, 2000, 5000} {
		tx := manyTokenStar(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { analyzeAll(b, []*normalform.Tx{tx}) })
	}
}
