package trace

import (
	"os"
	"testing"

	"github.com/flowq/flowq/normalform"
)

// TestLiquidationNotBundled: mev-inspect-rs's dydx_aave_liquidation repays
// a debt in DAI, receives collateral and sells it for DAI. Its two
// conversions at the recipient sum to a gain in DAI, but neither is an
// arbitrage the fixpoint labelled, so the bundle path (which joins cycles
// around a mixed-balance arbitrage, as flash-swap cascades leave them)
// does not make it one.
func TestLiquidationNotBundled(t *testing.T) {
	cfg := normalform.DefaultConfig()
	data, err := os.ReadFile("testdata/corpus/mev-inspect-rs/res/dydx_loan.data.json")
	if err != nil {
		t.Fatal(err)
	}
	txs := Decode(data, Options{Config: cfg}).Txs
	if len(txs) != 1 {
		t.Fatalf("%d transactions", len(txs))
	}
	a, err := normalform.Analyze(txs[0], cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Verdict != normalform.VerdictNone || len(a.Detections) != 0 {
		t.Errorf("verdict %s with %d detections (path %s), want none", a.Verdict, len(a.Detections), a.Path())
	}
	// Its gross is still what the liquidator gained: the flat sum.
	dai := normalform.FungibleToken(hexAddr("0x6b175474e89094c44da98b954eedeac495271d0f"))
	if g := a.Gross.At(a.Recipient, dai); g.Neg || g.Abs.Dec() != "18789801420638046859" {
		t.Errorf("gross %s DAI, want the liquidator's +18789801420638046859", g)
	}
}
