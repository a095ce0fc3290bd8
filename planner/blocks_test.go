package planner

import (
	"context"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// blockTx is a hand-made transaction of block n at index i (gen.Builder:
// sender EOA calls BOT, which runs the frames given).
func blockTx(t *testing.T, n uint64, i int, eoa, bot string, frames func(b *gen.Builder) []*normalform.Node) *normalform.Analysis {
	t.Helper()
	b := &gen.Builder{}
	tx := b.Tx(eoa, bot, 100000, b.F(eoa, bot, frames(b)...))
	m := &tx.Meta
	m.Block, m.HasBlock, m.Index, m.HasIndex = n, true, i, true
	m.Hash, m.HasHash = common.BigToHash(big.NewInt(int64(n*1000)+int64(i))), true
	a, err := normalform.Analyze(tx, normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// swapFrames: BOT pays `in` of tokIn into POOL and receives `out` of tokOut.
func swapFrames(bot, pool, in, tokIn, out, tokOut string) func(b *gen.Builder) []*normalform.Node {
	return func(b *gen.Builder) []*normalform.Node {
		return []*normalform.Node{b.T(bot, pool, in, tokIn, bot), b.F(bot, pool, b.T(pool, bot, out, tokOut, pool), b.Static(pool, tokOut))}
	}
}

// TestBackrunQueries runs the back-run statements against a real index
// holding a hand-made block 7: a large USDT→WETH swap on P1, a small one,
// then an arbitrage through P1 (WETH→USDT) and P2 that corrects it; and
// block 8, written without an ingest, whose findings wait to be computed.
func TestBackrunQueries(t *testing.T) {
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	arb := func(b *gen.Builder) []*normalform.Node {
		return []*normalform.Node{
			b.T("ARB", "P1", "1", "WETH", "ARB"),
			b.F("ARB", "P1", b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
			b.F("ARB", "P2", b.T("P2", "ARB", "1.1", "WETH", "P2"), b.Static("P2", "WETH")),
		}
	}
	for _, a := range []*normalform.Analysis{
		blockTx(t, 7, 0, "U1", "BOTU1", swapFrames("BOTU1", "P1", "30000", "USDT", "9", "WETH")),
		blockTx(t, 7, 1, "U2", "BOTU2", swapFrames("BOTU2", "P1", "300", "USDT", "0.1", "WETH")),
		blockTx(t, 7, 2, "ARBEOA", "ARB", arb),
	} {
		if err := ix.Put(a, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := ix.RefreshBlocks(context.Background(), nil); err != nil || n != 1 {
		t.Fatalf("refresh: %d blocks, %v", n, err)
	}
	if err := ix.Put(blockTx(t, 8, 0, "U1", "BOTU1", swapFrames("BOTU1", "P1", "30", "USDT", "0.01", "WETH")), 0); err != nil {
		t.Fatal(err)
	}
	arbBot := normalform.AddrKey(gen.Addr("ARB"))
	p1 := normalform.AddrKey(gen.Addr("P1"))
	tx := func(n uint64, i int) string {
		return common.BigToHash(big.NewInt(int64(n*1000) + int64(i))).Hex()[:10] + "…"
	}
	for _, c := range []struct{ q, want string }{
		{"find backruns", "block=7 index=2 tx=" + tx(7, 2) + " sender=" + normalform.AddrKey(gen.Addr("ARBEOA")) + " bot=" + arbBot +
			" pools=1 token=0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee gain=100000000000000000 corrects=" + common.BigToHash(big.NewInt(7000)).Hex()},
		{"find backruns where pools >= 2", "(no rows)"},
		{"find backruns where gross profit > 0.05 WETH and touches " + p1 + " and block = 7", "block=7"},
		{"find backruns where gross profit > 0.5 WETH", "(no rows)"},
		{"find backruns where bot != " + arbBot, "(no rows)"},
		{"find backruns where touches USDC", "(no rows)"},
		{"find backruns where touches WETH", "block=7 index=2"},
		{"find backruns where touches " + normalform.AddrKey(gen.Addr("USDT")), "block=7 index=2"},
		{"find backruns where touches " + normalform.AddrKey(gen.Addr("BOTU2")), "(no rows)"},
		{"count backruns by bot", "bot=" + arbBot + " backruns=1 example=" + tx(7, 2)},
		{"find sandwiches", "(no rows)"},
		{"show block 7", "block=7 index=0 tx=" + tx(7, 0) + " sender=" + normalform.AddrKey(gen.Addr("U1"))},
		{"show block 7", "verdict=arbitrage tier=confirmed path=fixpoint roles=backrun"},
		{"show block 7", "verdict=none roles=corrected"},
		{"show block 8", "error: block 8: its findings wait to be computed (an ingest stopped before it could): ingest again"},
	} {
		got := runOn(ix, c.q)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s:\n got %s\nwant it to hold %s", c.q, got, c.want)
		}
	}
}
