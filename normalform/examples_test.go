package normalform

import (
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

// The paper's worked examples, built as T0 trees from its figures and
// tables, and reduced by the engine.

var wethAddr = common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2")

// addr names an address deterministically; "WETH" is mainnet WETH.
func addr(name string) Address {
	if name == "WETH" {
		return wethAddr
	}
	return common.BytesToAddress(crypto.Keccak256([]byte(name))[:20])
}

// tok names a token: "ETH" is the native asset, "WETH" mainnet WETH.
func tok(name string) Token {
	if name == "ETH" {
		return NativeToken
	}
	return FungibleToken(addr(name))
}

// units parses a decimal amount with 18 decimals ("0.0125").
func units(s string) uint256.Int {
	intPart, frac, _ := strings.Cut(s, ".")
	frac += strings.Repeat("0", 18-len(frac))
	v := uint256.MustFromDecimal(strings.TrimLeft(intPart+frac, "0") + "0")
	v.Div(v, uint256.NewInt(10))
	return *v
}

// tb builds T0 trees: transfers get trace positions in creation order.
type tb struct {
	ts     []*Transfer
	frames int32
}

// t is a transfer from → to of amount in token, with sender σ; flags may
// say "mint", "burn" or "native".
func (b *tb) t(from, to, amount, token, sigma string, flags ...string) *Node {
	tr := &Transfer{From: addr(from), To: addr(to), Amount: units(amount), Token: tok(token), Sender: addr(sigma),
		Pos: int32(len(b.ts)), LogIndex: int32(len(b.ts))}
	for _, f := range flags {
		switch f {
		case "mint":
			tr.Flags |= Mint
		case "burn":
			tr.Flags |= Burn
		}
	}
	if token == "ETH" {
		tr.Flags |= NativeValue
		tr.LogIndex = -1
	}
	b.ts = append(b.ts, tr)
	return &Node{Leaf: tr}
}

// f is a call frame from ⇒ to (σ of its events = from).
func (b *tb) f(from, to string, kids ...*Node) *Node {
	b.frames++
	return &Node{Frame: &Frame{Type: Call, From: addr(from), To: addr(to), Index: b.frames, Sender: addr(from)}, Children: kids}
}

// static is a STATICCALL frame without transfers (a balance check): it
// keeps its parent from being collapsed, as real pools' checks do.
func (b *tb) static(from, to string) *Node {
	b.frames++
	return &Node{Frame: &Frame{Type: StaticCall, From: addr(from), To: addr(to), Index: b.frames, Sender: addr(from)}}
}

// tx assembles a transaction; gas is charged when gasUsed > 0 (price 1 gwei,
// base fee 0.5 gwei, coinbase "builder").
func (b *tb) tx(from, to string, gasUsed uint64, root *Node) *Tx {
	root.Frame.Index = 0
	// Trace positions and frame indices follow execution (pre-order), as
	// the decoder numbers them, whatever order the builder ran in.
	var order []*Node
	var frame int32
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Leaf != nil {
			n.Leaf.Pos, n.Leaf.LogIndex = int32(len(order)), int32(len(order))
			if n.Leaf.Token.Kind == Native {
				n.Leaf.LogIndex = -1
			}
			order = append(order, n)
			return
		}
		n.Frame.Index = frame
		frame++
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	tx := &Tx{Transfers: make([]Transfer, len(order))}
	for i, n := range order {
		tx.Transfers[i] = *n.Leaf
		n.Leaf = &tx.Transfers[i]
	}
	tx.Root = Trim(root)
	m := &tx.Meta
	m.From, m.HasFrom, m.To, m.HasTo = addr(from), true, addr(to), true
	if gasUsed > 0 {
		m.HasReceipt, m.GasUsed, m.Status = true, gasUsed, StatusSuccess
		m.EffectiveGasPrice.SetUint64(1e9)
		m.HasHeader, m.HasBaseFee, m.Miner = true, true, addr("builder")
		m.BaseFee.SetUint64(5e8)
	}
	return tx
}

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
		g, _ := fold(DefaultConfig(), a.Gross)
		got := g.At(a.Recipient, tok(token))
		want := units(strings.TrimPrefix(gross, "-"))
		if got.Abs != want || got.Neg != strings.HasPrefix(gross, "-") {
			t.Errorf("gross in %s = %s, want %s", token, got, gross)
		}
	}
	if t.Failed() {
		var b strings.Builder
		DefaultConfig().WriteAnalysis(&b, a, true)
		t.Log("\n" + b.String())
	}
}

func rulesFired(a *Analysis) string {
	var r []string
	for _, s := range a.Steps {
		if s.Rule != Lift {
			r = append(r, s.Rule.String())
		}
	}
	return strings.Join(r, " ")
}

// Figure 1 (a) and (b): one strategy routed two ways, one verdict.
func TestFigure1OneStrategyOneVerdict(t *testing.T) {
	// (a) pool-to-pool: SC→P1 1 WETH, P1→P2 2940 USDT, P2→SC 1.1 WETH.
	b := &tb{}
	root := b.f("EOA", "SC",
		b.t("SC", "P1", "1", "WETH", "SC"),
		b.f("SC", "P1", b.t("P1", "P2", "2940", "USDT", "P1"), b.static("P1", "USDT")),
		b.f("SC", "P2", b.t("P2", "SC", "1.1", "WETH", "P2"), b.static("P2", "WETH")))
	a := analyze(t, b.tx("EOA", "SC", 100000, root))
	expect(t, a, VerdictArbitrage, TierConfirmed, "", "ETH", "0.1")
	if len(a.Cycles) != 1 || a.Cycles[0].N != 3 {
		t.Errorf("(a): want one cycle of 3 transfers, got %d", len(a.Cycles))
	}
	// (b) SC-mediated: SC→P1 WETH, P1→SC USDT, SC→P2 USDT, P2→SC WETH.
	b = &tb{}
	root = b.f("EOA", "SC",
		b.t("SC", "P1", "1", "WETH", "SC"),
		b.f("SC", "P1", b.t("P1", "SC", "2940", "USDT", "P1"), b.static("P1", "USDT")),
		b.t("SC", "P2", "2940", "USDT", "SC"),
		b.f("SC", "P2", b.t("P2", "SC", "1.1", "WETH", "P2"), b.static("P2", "WETH")))
	a = analyze(t, b.tx("EOA", "SC", 100000, root))
	expect(t, a, VerdictArbitrage, TierConfirmed, "", "ETH", "0.1")
	if len(a.Cycles) != 1 || a.Cycles[0].N != 4 {
		t.Errorf("(b): want one cycle of 4 transfers, got %d", len(a.Cycles))
	}
}

// txR builds the paper's tx_R (Figure "Reduction of tx_R"): the bot
// flash-swaps 0.0598 WETH out of BEAN/WETH; in the callback each arm pool
// X/BEAN flash-swaps BEAN to BEAN/WETH and calls back, where the bot pays
// WETH into X/WETH, which sends X to X/BEAN; arms nest in the callbacks.
func txR(b *tb, arms [][2]string, convergence, hub string) *Node {
	// Innermost arm first.
	var inner *Node
	for i := len(arms) - 1; i >= 0; i-- {
		x, weth := arms[i][0], arms[i][1]
		xb, xw := x+"/"+convergence, x+"/WETH"
		cb := []*Node{
			b.t("SC", xw, weth, "WETH", "SC"),
			b.f("SC", xw, b.t(xw, xb, "100", x, xw), b.static(xw, x)),
		}
		if inner != nil {
			cb = append(cb, inner)
		}
		cb = append(cb, b.static("SC", convergence))
		inner = b.f("SC", xb,
			b.t(xb, hub, "300", convergence, xb),
			b.f(xb, "SC", cb...),
			b.static(xb, convergence))
	}
	return b.f("EOA", "SC",
		b.f("SC", hub,
			b.t(hub, "SC", "0.0598", "WETH", hub),
			b.f(hub, "SC", inner, b.static("SC", "WETH")),
			b.static(hub, "WETH")))
}

func TestTxRStar(t *testing.T) {
	b := &tb{}
	root := txR(b, [][2]string{{"CHAD", "0.0125"}, {"DUCK", "0.0333"}, {"MOON", "0.0117"}}, "BEAN", "BEAN/WETH")
	tx := b.tx("EOA", "SC", 0, root)
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
	if arms := DefaultConfig().arms(a.Cycles[0].Left, nil); len(arms) != 3 {
		t.Errorf("the cycle should hold a three-arm merge, got %d arms", len(arms))
	}
}

// The CoW Protocol batch settlement of block 24100069 (Table "0x8dc9"):
// USDC in, USDT out, through Balancer (USDC→BOLD) and Uniswap V4
// (BOLD→USDT). USDC ≠ USDT under =_τ: no arbitrage.
func TestCoWSettlementIsNotArbitrage(t *testing.T) {
	b := &tb{}
	root := b.f("solver", "Settlement",
		b.t("user", "Settlement", "1022.06", "USDC", "Settlement"),
		b.f("Settlement", "Vault", b.t("Settlement", "Vault", "1021.88", "USDC", "Vault"), b.t("Vault", "Settlement", "1022.84", "BOLD", "Vault")),
		b.f("Settlement", "V4", b.t("Settlement", "V4", "1022.84", "BOLD", "Settlement"), b.t("V4", "Settlement", "1022.50", "USDT", "V4")),
		b.t("Settlement", "user", "1022.47", "USDT", "Settlement"))
	a := analyze(t, b.tx("solver", "Settlement", 100000, root))
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
	b := &tb{}
	root := b.f("EOA", "Bot",
		b.f("Bot", "Balancer", b.t("Bot", "Balancer", "0.0105", "WETH", "Bot"), b.t("Balancer", "Bot", "0.0205", "MKR", "Balancer")),
		b.f("Bot", "Bancor", b.t("Bot", "Bancor", "0.0205", "MKR", "Bot"), b.t("Bancor", "Bot", "77.47", "BNT", "Bancor")),
		b.f("Bot", "Pool3", b.t("Bot", "Pool3", "77.47", "BNT", "Bot"), b.f("Pool3", "Bot", b.t("Pool3", "Bot", "0.01052", "ETH", "Pool3"))),
		b.f("Bot", "WETH", b.t("Bot", "WETH", "0.01049", "ETH", "Bot"), b.t("WETH", "Bot", "0.01049", "WETH", "Bot", "mint")))
	a := analyze(t, b.tx("EOA", "Bot", 10000, root)) // gas 0.00001 ETH
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
	b := &tb{}
	root := b.f("EOA", "Bot",
		b.f("Bot", "V4", b.t("Bot", "V4", "0.00666", "ETH", "Bot"), b.t("V4", "Pool", "596.56", "AF04", "V4")),
		b.f("Bot", "Pool", b.t("Pool", "Bot", "0.0066672", "WETH", "Pool"), b.static("Pool", "WETH")),
		b.f("Bot", "WETH", b.f("WETH", "Bot", b.t("WETH", "Bot", "0.00666", "ETH", "WETH")), b.t("Bot", "WETH", "0.00666", "WETH", "Bot", "burn")))
	a := analyze(t, b.tx("EOA", "Bot", 5000, root)) // gas 0.000005 ETH
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
	b := &tb{}
	root := b.f("EOA", "C",
		b.f("C", "LP", b.t("C", "LP", "23048.44", "LP", "C", "burn"), b.t("LP", "C", "100", "ECB0", "LP")),
		b.f("C", "P1", b.t("C", "P1", "100", "ECB0", "P1"), b.t("P1", "C", "30719", "CRVUSD", "P1")),
		b.f("C", "P2", b.t("C", "P2", "30719", "CRVUSD", "P2"), b.t("P2", "C", "30716.4", "FRXUSD", "P2")),
		b.f("C", "P3", b.t("C", "P3", "30716.4", "FRXUSD", "P3"), b.t("P3", "C", "19000", "USDC", "P3")),
		b.f("C", "WU", b.t("C", "WU", "0.0492", "WETH", "C"), b.t("WU", "C", "212", "USDC", "WU")),
		b.f("C", "Gauge", b.t("Gauge", "C", "50", "CRV", "Gauge")),
		b.f("C", "CRVPOOL", b.t("C", "CRVPOOL", "50", "CRV", "C"), b.f("CRVPOOL", "X", b.t("CRVPOOL", "C", "0.0488", "WETH", "CRVPOOL"))),
		b.f("C", "CVXPOOL", b.t("C", "CVXPOOL", "3", "CVX", "C"), b.f("CVXPOOL", "X", b.t("CVXPOOL", "C", "0.0004", "WETH", "CVXPOOL"))),
		b.t("C", "EOA", "19212", "USDC", "C"))
	a := analyze(t, b.tx("EOA", "C", 300000, root))
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
		b := &tb{}
		root := b.f("EOA", "Bot",
			b.f("Bot", "Lender",
				b.t("Lender", "Bot", "100", "WETH", "Lender"),
				b.f("Lender", "Bot",
					b.t("Bot", "P1", "100", "WETH", "Bot"),
					b.f("Bot", "P1", b.t("P1", "Bot", "294000", "USDT", "P1"), b.static("P1", "USDT")),
					b.t("Bot", "P2", "294000", "USDT", "Bot"),
					b.f("Bot", "P2", b.t("P2", "Bot", "100.5", "WETH", "P2"), b.static("P2", "WETH"))),
				b.t("Bot", "Lender", repay, "WETH", "Lender")))
		return b.tx("EOA", "Bot", 200000, root)
	}
	a := analyze(t, build("100"))
	expect(t, a, VerdictArbitrage, TierConfirmed, "", "ETH", "0.5")
	var lc *Chain
	for _, c := range a.Cycles {
		if c.Label == LeftoverCycle {
			lc = c
		}
	}
	if lc == nil || lc.Rule != Specular || lc.TokIn() != tok("WETH") || lc.First.Amount != units("100") || len(a.Leftover) != 0 {
		t.Fatalf("want LC(WETH, 100) by the specular pair, no leftovers")
	}
	a = analyze(t, build("100.09"))
	expect(t, a, VerdictArbitrage, TierConfirmed, "", "ETH", "0.41")
}

// A plain two-leg swap meets every clause of Definition 5 but the round
// trip: not an arbitrage.
func TestPlainSwapIsNotArbitrage(t *testing.T) {
	b := &tb{}
	root := b.f("user", "Pool", b.t("user", "Pool", "3000", "USDC", "Pool"), b.t("Pool", "user", "1", "WETH", "Pool"))
	a := analyze(t, b.tx("user", "Pool", 100000, root))
	if a.Verdict != VerdictNone || len(a.Cycles) != 1 || a.Cycles[0].Label == Arbitrage || a.Cycles[0].TokIn() == a.Cycles[0].TokOut() {
		t.Errorf("plain swap: verdict %s, %d cycles", a.Verdict, len(a.Cycles))
	}
}

// A pure wrap and unwrap is not an arbitrage (R14's WrapUnwrap guard).
func TestPureWrapUnwrapIsNotArbitrage(t *testing.T) {
	b := &tb{}
	root := b.f("EOA", "Bot",
		b.f("Bot", "WETH", b.t("Bot", "WETH", "1", "ETH", "Bot"), b.t("WETH", "Bot", "1", "WETH", "Bot", "mint")),
		b.f("Bot", "WETH", b.f("WETH", "Bot", b.t("WETH", "Bot", "1", "ETH", "WETH")), b.t("Bot", "WETH", "1", "WETH", "Bot", "burn")))
	a := analyze(t, b.tx("EOA", "Bot", 50000, root))
	if a.Verdict != VerdictNone {
		t.Errorf("wrap/unwrap: verdict %s (%s)", a.Verdict, reasons(a))
	}
	for _, c := range a.Cycles {
		if c.Label == Arbitrage {
			t.Errorf("C%d labelled arbitrage", c.ID)
		}
	}
}
