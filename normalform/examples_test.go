package normalform_test

import (
	"strings"
	"testing"

	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
	"github.com/flowq/flowq/normalform/show"
)

// The paper's worked examples, built as T0 trees from its figures and
// tables, and reduced by the engine.

func analyze(t *testing.T, tx *Tx) *Analysis {
	t.Helper()
	a, err := Analyze(tx, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func reasons(a *Analysis) string {
	var r []string
	for _, x := range a.Reasons {
		r = append(r, string(x))
	}
	return strings.Join(r, ",")
}

// expect checks verdict, tier, reasons and the gross balance at the
// principals in one token, native and wrapped native folded ("ETH").
func expect(t *testing.T, a *Analysis, verdict Verdict, tier Tier, why string, token string, gross string) {
	t.Helper()
	if a.Verdict != verdict || a.Tier != tier || reasons(a) != why {
		t.Errorf("verdict %s (%s) reasons %q, want %s (%s) %q", a.Verdict, a.Tier, reasons(a), verdict, tier, why)
	}
	if token != "" {
		g, _ := DefaultConfig().Fold(a.Gross)
		got := g.At(a.Recipient, gen.Tok(token))
		want := gen.Units(strings.TrimPrefix(gross, "-"))
		if got.Abs != want || got.Neg != strings.HasPrefix(gross, "-") {
			t.Errorf("gross in %s = %s, want %s", token, got, gross)
		}
	}
	if t.Failed() {
		var b strings.Builder
		show.WriteAnalysis(DefaultConfig(), &b, a, true)
		t.Log("\n" + b.String())
	}
}

func rulesFired(a *Analysis) string {
	var r []string
	for _, s := range a.Steps {
		if s.Rule != Lift && s.Rule != Detect { // the kernel's rewrites
			r = append(r, s.Rule.String())
		}
	}
	return strings.Join(r, " ")
}

// Figure 1 (a) and (b): one strategy routed two ways, one verdict.
func TestFigure1OneStrategyOneVerdict(t *testing.T) {
	// (a) pool-to-pool: SC→P1 1 WETH, P1→P2 2940 USDT, P2→SC 1.1 WETH.
	b := &gen.Builder{}
	root := b.F("EOA", "SC",
		b.T("SC", "P1", "1", "WETH", "SC"),
		b.F("SC", "P1", b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
		b.F("SC", "P2", b.T("P2", "SC", "1.1", "WETH", "P2"), b.Static("P2", "WETH")))
	a := analyze(t, b.Tx("EOA", "SC", 100000, root))
	expect(t, a, VerdictArbitrage, TierConfirmed, "", "ETH", "0.1")
	if len(a.Cycles) != 1 || a.Cycles[0].N != 3 {
		t.Errorf("(a): want one cycle of 3 transfers, got %d", len(a.Cycles))
	}
	// (b) SC-mediated: SC→P1 WETH, P1→SC USDT, SC→P2 USDT, P2→SC WETH.
	b = &gen.Builder{}
	root = b.F("EOA", "SC",
		b.T("SC", "P1", "1", "WETH", "SC"),
		b.F("SC", "P1", b.T("P1", "SC", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
		b.T("SC", "P2", "2940", "USDT", "SC"),
		b.F("SC", "P2", b.T("P2", "SC", "1.1", "WETH", "P2"), b.Static("P2", "WETH")))
	a = analyze(t, b.Tx("EOA", "SC", 100000, root))
	expect(t, a, VerdictArbitrage, TierConfirmed, "", "ETH", "0.1")
	if len(a.Cycles) != 1 || a.Cycles[0].N != 4 {
		t.Errorf("(b): want one cycle of 4 transfers, got %d", len(a.Cycles))
	}
}

func TestTxRStar(t *testing.T) {
	b := &gen.Builder{}
	root := gen.TxR(b, [][2]string{{"CHAD", "0.0125"}, {"DUCK", "0.0333"}, {"MOON", "0.0117"}}, "BEAN", "BEAN/WETH")
	tx := b.Tx("EOA", "SC", 0, root)
	if n := tx.Root.CountFrames(); n != 12 {
		t.Errorf("trimmed tx_R has %d frames, the paper's has twelve", n)
	}
	a := analyze(t, tx)
	expect(t, a, VerdictWarning, TierProbable, "costs_unknown", "ETH", "0.0023")
	if len(a.Cycles) != 1 || a.Cycles[0].Label != Arbitrage || a.Cycles[0].N != 10 {
		t.Fatalf("want one arbitrage cycle over all ten transfers")
	}
	fired := rulesFired(a)
	// lift/R1 then lift/R6 per arm, merges, R6 closes, R14 annotates.
	if fired != "R1 R6 R1 R6 R7 R1 R6 R7 R6 R14" {
		t.Errorf("rules fired: %s", fired)
	}
	if arms := show.Arms(DefaultConfig(), a.Cycles[0].Left, nil); len(arms) != 3 {
		t.Errorf("the cycle should hold a three-arm merge, got %d arms", len(arms))
	}
}

// The CoW Protocol batch settlement of block 24100069 (Table "0x8dc9"):
// USDC in, USDT out, through Balancer (USDC→BOLD) and Uniswap V4
// (BOLD→USDT). USDC ≠ USDT under =_τ: no arbitrage.
func TestCoWSettlementIsNotArbitrage(t *testing.T) {
	b := &gen.Builder{}
	root := b.F("solver", "Settlement",
		b.T("user", "Settlement", "1022.06", "USDC", "Settlement"),
		b.F("Settlement", "Vault", b.T("Settlement", "Vault", "1021.88", "USDC", "Vault"), b.T("Vault", "Settlement", "1022.84", "BOLD", "Vault")),
		b.F("Settlement", "V4", b.T("Settlement", "V4", "1022.84", "BOLD", "Settlement"), b.T("V4", "Settlement", "1022.50", "USDT", "V4")),
		b.T("Settlement", "user", "1022.47", "USDT", "Settlement"))
	a := analyze(t, b.Tx("solver", "Settlement", 100000, root))
	if a.Verdict != VerdictNone || reasons(a)[:9] != "no_cycles" {
		t.Errorf("CoW settlement: verdict %s, reasons %s", a.Verdict, reasons(a))
	}
	for _, c := range a.Cycles {
		if c.Label == Arbitrage {
			t.Errorf("no chain may be labelled arbitrage: C%d %s→%s", c.ID, c.TokIn().Key(), c.TokOut().Key())
		}
	}
}

// The 3-pool WETH-to-ETH cycle of block 24100069 (Table "0x4744"), with a
// wrap of the proceeds: an arbitrage (the cycle leaves in WETH and returns
// in ETH), its mint cycle left apart.
func TestThreePoolWethToEthWithMintCycle(t *testing.T) {
	b := &gen.Builder{}
	root := b.F("EOA", "Bot",
		b.F("Bot", "Balancer", b.T("Bot", "Balancer", "0.0105", "WETH", "Bot"), b.T("Balancer", "Bot", "0.0205", "MKR", "Balancer")),
		b.F("Bot", "Bancor", b.T("Bot", "Bancor", "0.0205", "MKR", "Bot"), b.T("Bancor", "Bot", "77.47", "BNT", "Bancor")),
		b.F("Bot", "Pool3", b.T("Bot", "Pool3", "77.47", "BNT", "Bot"), b.F("Pool3", "Bot", b.T("Pool3", "Bot", "0.01052", "ETH", "Pool3"))),
		b.F("Bot", "WETH", b.T("Bot", "WETH", "0.01049", "ETH", "Bot"), b.T("WETH", "Bot", "0.01049", "WETH", "Bot", "mint")))
	a := analyze(t, b.Tx("EOA", "Bot", 10000, root)) // gas 0.00001 ETH
	expect(t, a, VerdictArbitrage, TierConfirmed, "promoted", "ETH", "0.00002")
	var labels []string
	for _, c := range a.Cycles {
		labels = append(labels, c.Label.String())
	}
	if strings.Join(labels, " ") != "arbitrage token_mint" {
		t.Errorf("cycles %v, want the arbitrage and its mint cycle", labels)
	}
}

// The Uniswap V4 triangle of block 24100069 (Table "0x9d71"): ETH in, WETH
// back, and an unwrap: an arbitrage.
func TestV4TriangleEthToWeth(t *testing.T) {
	b := &gen.Builder{}
	root := b.F("EOA", "Bot",
		b.F("Bot", "V4", b.T("Bot", "V4", "0.00666", "ETH", "Bot"), b.T("V4", "Pool", "596.56", "AF04", "V4")),
		b.F("Bot", "Pool", b.T("Pool", "Bot", "0.0066672", "WETH", "Pool"), b.Static("Pool", "WETH")),
		b.F("Bot", "WETH", b.F("WETH", "Bot", b.T("WETH", "Bot", "0.00666", "ETH", "WETH")), b.T("Bot", "WETH", "0.00666", "WETH", "Bot", "burn")))
	a := analyze(t, b.Tx("EOA", "Bot", 5000, root)) // gas 0.000005 ETH
	expect(t, a, VerdictArbitrage, TierConfirmed, "promoted", "ETH", "0.0000072")
	var labels []string
	for _, c := range a.Cycles {
		labels = append(labels, c.Label.String())
	}
	if strings.Join(labels, " ") != "arbitrage token_burn" {
		t.Errorf("cycles %v, want the arbitrage and its burn cycle", labels)
	}
}

// The yield harvest (Appendix "A Yield Harvest That Looks Like an
// Arbitrage"): LP unwraps, stable swaps and reward sales funnel into USDC;
// WETH leaves and returns in equal amounts through three different calls;
// no cycle returns in its own token.
func TestYieldHarvestIsNotArbitrage(t *testing.T) {
	b := &gen.Builder{}
	root := b.F("EOA", "C",
		b.F("C", "LP", b.T("C", "LP", "23048.44", "LP", "C", "burn"), b.T("LP", "C", "100", "ECB0", "LP")),
		b.F("C", "P1", b.T("C", "P1", "100", "ECB0", "P1"), b.T("P1", "C", "30719", "CRVUSD", "P1")),
		b.F("C", "P2", b.T("C", "P2", "30719", "CRVUSD", "P2"), b.T("P2", "C", "30716.4", "FRXUSD", "P2")),
		b.F("C", "P3", b.T("C", "P3", "30716.4", "FRXUSD", "P3"), b.T("P3", "C", "19000", "USDC", "P3")),
		b.F("C", "WU", b.T("C", "WU", "0.0492", "WETH", "C"), b.T("WU", "C", "212", "USDC", "WU")),
		b.F("C", "Gauge", b.T("Gauge", "C", "50", "CRV", "Gauge")),
		b.F("C", "CRVPOOL", b.T("C", "CRVPOOL", "50", "CRV", "C"), b.F("CRVPOOL", "X", b.T("CRVPOOL", "C", "0.0488", "WETH", "CRVPOOL"))),
		b.F("C", "CVXPOOL", b.T("C", "CVXPOOL", "3", "CVX", "C"), b.F("CVXPOOL", "X", b.T("CVXPOOL", "C", "0.0004", "WETH", "CVXPOOL"))),
		b.T("C", "EOA", "19212", "USDC", "C"))
	a := analyze(t, b.Tx("EOA", "C", 300000, root))
	if a.Verdict != VerdictNone || !strings.HasPrefix(reasons(a), "no_cycles") {
		t.Errorf("yield harvest: verdict %s (%s), want none", a.Verdict, reasons(a))
	}
	for _, c := range a.Cycles {
		if c.Label == Arbitrage || (c.Closed() && DefaultConfig().TokenEq(c.TokIn(), c.TokOut()) && c.Label != TokenBurn && c.Label != TokenMint && c.Label != LeftoverCycle) {
			t.Errorf("no chain may return in its own token: C%d %s", c.ID, c.Label)
		}
	}
}

// An Aave-style flash loan: borrow and repay in the lender's frame around
// the bot's callback; the arbitrage inside, the loan recovered as a
// specular pair LC(WETH, 100); with a fee, a complementary pair whose net
// is charged to the gross.
func TestFlashLoanSpecularPair(t *testing.T) {
	build := func(repay string) *Tx {
		b := &gen.Builder{}
		root := b.F("EOA", "Bot",
			b.F("Bot", "Lender",
				b.T("Lender", "Bot", "100", "WETH", "Lender"),
				b.F("Lender", "Bot",
					b.T("Bot", "P1", "100", "WETH", "Bot"),
					b.F("Bot", "P1", b.T("P1", "Bot", "294000", "USDT", "P1"), b.Static("P1", "USDT")),
					b.T("Bot", "P2", "294000", "USDT", "Bot"),
					b.F("Bot", "P2", b.T("P2", "Bot", "100.5", "WETH", "P2"), b.Static("P2", "WETH"))),
				b.T("Bot", "Lender", repay, "WETH", "Lender")))
		return b.Tx("EOA", "Bot", 200000, root)
	}
	a := analyze(t, build("100"))
	expect(t, a, VerdictArbitrage, TierConfirmed, "", "ETH", "0.5")
	var lc *Chain
	for _, c := range a.Cycles {
		if c.Label == LeftoverCycle {
			lc = c
		}
	}
	if lc == nil || lc.Rule != Specular || lc.TokIn() != gen.Tok("WETH") || lc.First.Amount != gen.Units("100") || len(a.Leftover) != 0 {
		t.Fatalf("want LC(WETH, 100) by the specular pair, no leftovers")
	}
	a = analyze(t, build("100.09"))
	expect(t, a, VerdictArbitrage, TierConfirmed, "", "ETH", "0.41")
}

// A plain two-leg swap meets every clause of Definition 5 but the round
// trip: not an arbitrage.
func TestPlainSwapIsNotArbitrage(t *testing.T) {
	b := &gen.Builder{}
	root := b.F("user", "Pool", b.T("user", "Pool", "3000", "USDC", "Pool"), b.T("Pool", "user", "1", "WETH", "Pool"))
	a := analyze(t, b.Tx("user", "Pool", 100000, root))
	if a.Verdict != VerdictNone || len(a.Cycles) != 1 || a.Cycles[0].Label == Arbitrage || a.Cycles[0].TokIn() == a.Cycles[0].TokOut() {
		t.Errorf("plain swap: verdict %s, %d cycles", a.Verdict, len(a.Cycles))
	}
}

// A pure wrap and unwrap is not an arbitrage (R14's WrapUnwrap guard).
func TestPureWrapUnwrapIsNotArbitrage(t *testing.T) {
	b := &gen.Builder{}
	root := b.F("EOA", "Bot",
		b.F("Bot", "WETH", b.T("Bot", "WETH", "1", "ETH", "Bot"), b.T("WETH", "Bot", "1", "WETH", "Bot", "mint")),
		b.F("Bot", "WETH", b.F("WETH", "Bot", b.T("WETH", "Bot", "1", "ETH", "WETH")), b.T("Bot", "WETH", "1", "WETH", "Bot", "burn")))
	a := analyze(t, b.Tx("EOA", "Bot", 50000, root))
	if a.Verdict != VerdictNone {
		t.Errorf("wrap/unwrap: verdict %s (%s)", a.Verdict, reasons(a))
	}
	for _, c := range a.Cycles {
		if c.Label == Arbitrage {
			t.Errorf("C%d labelled arbitrage", c.ID)
		}
	}
}
