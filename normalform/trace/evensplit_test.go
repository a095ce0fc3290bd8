package trace

import (
	"compress/gzip"
	"io"
	"os"
	"testing"

	"github.com/flowq/flowq/normalform"
)

// TestEvenSplitLogsAttributed: a flash-swap cascade in which two frames
// make the same call, transfer(pool, amount) of one token with one amount,
// from two different callers (the bot splits evenly). In the Parity shape
// the logs are not nested in their frames, so the decoder attributes them;
// a Transfer log's from is the caller of transfer(), and attributing by
// call data alone gave both logs to one frame (the deeper), leaving the
// other "returned true with no log". Both shapes of the same transaction
// (testdata/evensplit, made by the scenario generator on the in-process
// EVM) must decode to the same transfers, verdict and hashes.
func TestEvenSplitLogsAttributed(t *testing.T) {
	cfg := normalform.DefaultConfig()
	var got []*normalform.Analysis
	for _, name := range []string{"geth_v2_cascade_3.json.gz", "parity_v2_cascade_3.json.gz"} {
		f, err := os.Open("testdata/evensplit/" + name)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		res := Decode(data, Options{Config: cfg})
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %v", name, res.Errors[0])
		}
		if len(res.Txs) != 1 {
			t.Fatalf("%s: %d transactions", name, len(res.Txs))
		}
		a, err := normalform.Analyze(res.Txs[0], cfg)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	g, p := got[0], got[1]
	if g.Verdict != normalform.VerdictArbitrage || p.Verdict != g.Verdict || p.Hashes() != g.Hashes() {
		t.Errorf("geth %s %v, parity %s %v: want one arbitrage with one set of hashes", g.Verdict, g.Hashes(), p.Verdict, p.Hashes())
	}
	if len(g.Tx.Transfers) != len(p.Tx.Transfers) {
		t.Fatalf("%d transfers in geth, %d in parity", len(g.Tx.Transfers), len(p.Tx.Transfers))
	}
	for i := range g.Tx.Transfers {
		a, b := &g.Tx.Transfers[i], &p.Tx.Transfers[i]
		if a.From != b.From || a.To != b.To || a.Token != b.Token || a.Amount != b.Amount || a.Sender != b.Sender {
			t.Errorf("transfer #%d: geth %s→%s σ %s, parity %s→%s σ %s", i, a.From.Hex(), a.To.Hex(), a.Sender.Hex(), b.From.Hex(), b.To.Hex(), b.Sender.Hex())
		}
	}
}
