package block_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
)

// BenchmarkBlock: block.Analyze over one block per iteration (the normal
// forms are computed once, before the timer): the scenario sandwich
// block, the corpus's mainnet block 11017338 (124 transactions, 3
// sandwiches), a generated block of 150 transactions, and blocks of 1,250 to
// 5,000 one-swap transactions on 50 pools (growth). It reports wall and
// CPU (getrusage: user + system, every thread) per block. BENCHMARKS.md,
// "Block analysis", has the command and the figures.
//
//	go test ./normalform/block -run '^$' -bench Block -benchtime 20x
func BenchmarkBlock(b *testing.B) {
	b.Run("scenario", func(b *testing.B) {
		var txs []*normalform.Analysis
		for _, n := range []string{"sandwich_front", "sandwich_victim", "sandwich_back"} {
			txs = append(txs, analyzeFile(b, filepath.Join(scenarios, "geth", n+".json")))
		}
		benchBlock(b, 137, txs, 1)
	})
	b.Run("mainnet-11017338", func(b *testing.B) {
		benchBlock(b, 11017338, analyzeBlockFile(b, mainnetBlock), 3)
	})
	b.Run("txs=150", func(b *testing.B) {
		txs, want := block150(b)
		benchBlock(b, 7, txs, want)
	})
	// Back-runs on one pool pair (the worst case: each arbitrage looks
	// back over every earlier swap of its pools).
	for _, n := range []int{1250, 2500} {
		b.Run(fmt.Sprintf("backruns=%d/pools=2", n), func(b *testing.B) {
			txs := make([]*normalform.Analysis, 0, 2*n)
			for i := 0; i < n; i++ {
				txs = append(txs, swapTx(b, 2*i, fmt.Sprintf("U%d", i), fmt.Sprintf("UB%d", i), "P1", "30000", "USDT", "9", "WETH"), arbTx(b, 2*i+1))
			}
			r, err := block.Analyze(7, txs, nil)
			if err != nil || len(r.Backruns) != n {
				b.Fatalf("%d back-runs, want %d (%v)", len(r.Backruns), n, err)
			}
			benchBlock(b, 7, txs, 0)
		})
	}
	for _, n := range []int{1250, 2500, 5000} {
		b.Run(fmt.Sprintf("swaps=%d/pools=50", n), func(b *testing.B) {
			txs, want := swapsOnPools(b, n, 50)
			benchBlock(b, 7, txs, want)
		})
	}
}

func benchBlock(b *testing.B, n uint64, txs []*normalform.Analysis, sandwiches int) {
	r, err := block.Analyze(n, txs, nil)
	if err != nil {
		b.Fatal(err)
	}
	if len(r.Sandwiches) != sandwiches {
		b.Fatalf("%d sandwiches, want %d", len(r.Sandwiches), sandwiches)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		if _, err := block.Analyze(n, txs, nil); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cputime.Process() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/block")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/1e6, "cpu-ms/block")
	b.ReportMetric(float64(len(r.Swaps)), "swaps")
}

// block150: 30 groups of five transactions on 20 pools: a bot's front
// leg, two users' swaps the same way, the bot's back leg, and a fifth
// transaction (a user's swap the other way, or every tenth group an
// arbitrage through P1 and P2). One sandwich per group.
func block150(b *testing.B) ([]*normalform.Analysis, int) {
	var txs []*normalform.Analysis
	for g := 0; g < 30; g++ {
		pool, tok, bot := fmt.Sprintf("POOL%d", g%20), fmt.Sprintf("TKN%d", g%20), fmt.Sprintf("BOT%d", g%7)
		i := len(txs)
		txs = append(txs,
			swapTx(b, i, "E"+bot, bot, pool, "3", "WETH", "300", tok),
			swapTx(b, i+1, fmt.Sprintf("U%d", i+1), fmt.Sprintf("UB%d", i+1), pool, "5", "WETH", "450", tok),
			swapTx(b, i+2, fmt.Sprintf("U%d", i+2), fmt.Sprintf("UB%d", i+2), pool, "1", "WETH", "80", tok),
			swapTx(b, i+3, "E"+bot, bot, pool, "300", tok, "3.5", "WETH"))
		if g%10 == 9 {
			txs = append(txs, arbTx(b, i+4))
		} else {
			txs = append(txs, swapTx(b, i+4, fmt.Sprintf("U%d", i+4), fmt.Sprintf("UB%d", i+4), fmt.Sprintf("POOL%d", (g+7)%20), "20", fmt.Sprintf("TKN%d", (g+7)%20), "0.2", "WETH"))
		}
	}
	return txs, 30
}

// swapsOnPools: n one-swap transactions, transaction i on pool i mod
// pools; on each pool, in fours: a bot's front leg, two users' swaps the
// same way, the bot's back leg (one sandwich per four).
func swapsOnPools(b *testing.B, n, pools int) ([]*normalform.Analysis, int) {
	txs := make([]*normalform.Analysis, n)
	want := 0
	for i := range txs {
		p, k := i%pools, i/pools
		pool, tok, bot := fmt.Sprintf("POOL%d", p), fmt.Sprintf("TKN%d", p), fmt.Sprintf("BOT%d", p%5)
		switch k % 4 {
		case 0:
			txs[i] = swapTx(b, i, "E"+bot, bot, pool, "3", "WETH", "300", tok)
		case 1, 2:
			txs[i] = swapTx(b, i, fmt.Sprintf("U%d", i), fmt.Sprintf("UB%d", i), pool, "5", "WETH", "450", tok)
		case 3:
			txs[i] = swapTx(b, i, "E"+bot, bot, pool, "300", tok, "3.5", "WETH")
			want++
		}
	}
	return txs, want
}
