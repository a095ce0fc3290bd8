package scenario

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
	"github.com/flowq/flowq/normalform/trace"
	"github.com/flowq/flowq/normalform/witness"
)

// These tests run the engine on the saved scenario bundles and hold its
// verdicts against two things that do not come from flowq: the truth read
// from the chain (truth.json) and the classification each scenario was
// designed to have (expectedVerdicts, below).

// expectation is what a scenario was built to be.
type expectation struct {
	verdict normalform.Verdict
	tier    normalform.Tier
	// gross: the gross at the principals equals the truth's gross at the
	// origin (folded, to the wei).
	gross bool
	// builder: the builder payment is reported as a cost, equal to the
	// truth's coinbase payment.
	builder bool
	// inner: the only arbitrage cycle closes at the truth's origin, an
	// inner contract, with δ there equal to the truth's gross.
	inner bool
	// reasons the engine must give.
	reasons []normalform.Reason
	// netPositive: the design makes the net after gas positive (for a
	// cycle at the principals); checked against the truth too.
	netPositive bool

	// The issue-14 scenarios (flows.go) add:
	//
	// origin: the name of the address where an arbitrage cycle closes
	// (whether or not it is a principal).
	origin string
	// gain: the gross reported for the coalition of sender, recipient and
	// origin is the truth's origin_gain (its builder payments and payouts
	// added back), and the net is that less the gas and the builder
	// payments (a payout is not a cost).
	gain bool
	// payouts: the truth's payouts are reported apart, not as leftovers.
	payouts bool
	// notAt: names of addresses where no arbitrage may be detected (a
	// lender repaid with a fee).
	notAt []string
	// path: how the design expects the arbitrage to be found (the
	// transaction's path, and the path of the detection at origin).
	path normalform.Path

	// Issue 17 (v4.go) adds:
	//
	// hidden: the chain's truth is an arbitrage that the standard events
	// cannot show (a route netted inside Uniswap V4's PoolManager, of
	// which only the net profit is paid out): flowq must report no
	// arbitrage (never a false one), and the balance it does see at the
	// recipient is the truth's gross there.
	hidden bool
}

// flowArb is an arbitrage of flows.go: confirmed at origin, found by
// path, with the truth's whole gain.
func flowArb(origin string, path normalform.Path) expectation {
	return expectation{verdict: normalform.VerdictArbitrage, tier: normalform.TierConfirmed, origin: origin, gain: true, netPositive: true, path: path}
}

// with returns e changed by f (to add fields to a flowArb).
func (e expectation) with(f func(*expectation)) expectation {
	f(&e)
	return e
}

var (
	confirmedArb = expectation{verdict: normalform.VerdictArbitrage, tier: normalform.TierConfirmed, gross: true, netPositive: true}
	noArb        = expectation{verdict: normalform.VerdictNone, tier: normalform.TierNone}
)

// expectedVerdicts is the classification table, written from each
// scenario's design (scenarios.go), not from flowq's output.
var expectedVerdicts = map[string]expectation{
	// Arbitrages that gain more than their gas: confirmed, with the
	// chain's gross.
	"two_pool_arb":   confirmedArb,
	"triangular_arb": confirmedArb,
	"star_r":         confirmedArb,
	"star_s":         confirmedArb,
	"flash_swap_arb": confirmedArb,
	"v3_v2_arb":      confirmedArb,
	"coinbase_arb": {verdict: normalform.VerdictArbitrage, tier: normalform.TierConfirmed, gross: true, builder: true, netPositive: true,
		reasons: []normalform.Reason{normalform.ReasonBuilder}},
	"eip7702_self": {verdict: normalform.VerdictArbitrage, tier: normalform.TierConfirmed, gross: true, netPositive: true,
		reasons: []normalform.Reason{normalform.ReasonSelfCall}},
	// The cycle gains less than the gas: attempted.
	"loses_after_gas": {verdict: normalform.VerdictWarning, tier: normalform.TierAttempted, gross: true},
	// The cycle closes at the strategy, inside the recipient (the
	// Executor): an inner origin whose gain covers the whole cost.
	"inner_cycle": {verdict: normalform.VerdictArbitrage, tier: normalform.TierConfirmed, inner: true, gross: true, netPositive: true,
		reasons: []normalform.Reason{normalform.ReasonInnerCycle}},
	// No arbitrage.
	"reverted_attempt":  noArb,
	"router_swap":       noArb,
	"router_multihop":   noArb,
	"wrap":              noArb,
	"unwrap":            noArb,
	"liquidity_add":     noArb,
	"liquidity_remove":  noArb,
	"nft_erc721":        noArb,
	"nft_erc1155":       noArb,
	"nft_erc1155_batch": noArb,

	// Issue 14 (flows.go), from the "Build" section; the path the
	// design expects is named in each comment.
	//
	// Pool-first flash swaps: the executor's cycle, WETH out and in (path
	// fixpoint, or rotation where the fixpoint reads the walk from the
	// first pool); the builder payment a cost, the payout to the owner's
	// wallet (or to the recipient) apart. The inner executor's gain covers
	// the whole cost, gas and builder payment: arbitrage (path inner).
	"v3_flash_first": flowArb("flash_executor", normalform.PathFixpoint).with(func(e *expectation) {
		e.builder, e.payouts, e.reasons = true, true, []normalform.Reason{normalform.ReasonBuilder}
	}),
	"v2_flash_first": flowArb("flash_executor", normalform.PathFixpoint).with(func(e *expectation) {
		e.builder, e.payouts, e.reasons = true, true, []normalform.Reason{normalform.ReasonBuilder}
	}),
	"v3_flash_first_inner": flowArb("inner_flash_executor", normalform.PathRotation).with(func(e *expectation) {
		e.builder, e.payouts = true, true
	}),
	// Cascades: the cycles at the bot sum to a WETH gain and zero in every
	// other token, whichever order they unwind in (path bundle).
	"v2_cascade_3":      flowArb("cascade_bot", normalform.PathBundle),
	"v2_cascade_5":      flowArb("cascade_bot", normalform.PathBundle),
	"v2_cascade_3_fifo": flowArb("cascade_bot", normalform.PathBundle),
	"v2_cascade_5_fifo": flowArb("cascade_bot", normalform.PathBundle),
	// The sender's ETH makes a round trip; the bot's surplus is the gain
	// (path rotation), the tip a builder payment.
	"wrap_cycle_refund": flowArb("wrap_bot", normalform.PathRotation).with(func(e *expectation) {
		e.builder, e.reasons = true, []normalform.Reason{normalform.ReasonBuilder}
	}),
	// The executor behind the controller keeps a gain that covers the
	// transaction's whole cost (path inner).
	"executor_controller": flowArb("arb_executor", normalform.PathInner),
	// The bot's payout to its cold wallet is listed apart and does not
	// lower the verdict.
	"cold_wallet_payout": flowArb("payout_bot", normalform.PathFixpoint).with(func(e *expectation) { e.payouts = true }),
	// Arbitrage at the borrower (the recipient); the lender, repaid with a
	// fee in the token it lent, trades nothing.
	"flash_loan_fee": flowArb("borrower", normalform.PathFixpoint).with(func(e *expectation) { e.notAt = []string{"lender"} }),
	// The control: a loan repaid with a fee, nothing traded.
	"flash_loan_repay_only": noArb.with(func(e *expectation) { e.notAt = []string{"lender", "borrower"} }),
	// A sandwich's legs: none alone is an arbitrage.
	"sandwich_front":  noArb,
	"sandwich_victim": noArb,
	"sandwich_back":   noArb,

	// Issue 17 (v4.go): Uniswap V4. A user's swap through a router, paid
	// in ETH or in an ERC-20: no arbitrage. The V4 → V2 arbitrage: the
	// bot (the recipient) pays the PoolManager ETH (settle), the manager
	// pays the V2 pair the token (take), the pair pays the bot WETH: a
	// cycle at the bot with the chain's gross, leaving in ETH and closing
	// in WETH (path promotion, as the paper's V4 case study).
	"v4_user_swap_eth":   noArb,
	"v4_user_swap_erc20": noArb,
	"v4_v2_arb": confirmedArb.with(func(e *expectation) {
		e.origin, e.path, e.reasons = "v4_bot", normalform.PathPromotion, []normalform.Reason{normalform.ReasonPromoted}
	}),
	// The V4-only triangle with flash accounting: three swaps net to a
	// profit in ETH, the only transfer the manager's payment of it. No
	// cycle in the events: flowq says none, never a false arbitrage.
	"v4_triangle_net": noArb.with(func(e *expectation) { e.hidden = true }),
	// A user's swap whose output is kept as ERC-6909 claims: no arbitrage.
	"v4_user_swap_claims": noArb,

	// The fourth phase (v4router.go): the real Universal Router. The
	// user's swap (V4 then V2): no arbitrage. The searcher's V4 → V2
	// arbitrage through the router's commands, paid in ETH and paid back
	// in ETH by UNWRAP_WETH: with the router in R5's set, a cycle at the
	// searcher with the chain's gross.
	"v4_ur_user_swap": noArb,
	"v4_ur_v2_arb":    confirmedArb.with(func(e *expectation) { e.origin = "searcher" }),

	// The fifth phase (order.go): a mint logged before (or after) a value
	// call in one frame. No arbitrage, in both shapes.
	"log_then_pay": noArb,
	"pay_then_log": noArb,

	// The sixth phase (claims.go): the V4-only triangle settled through
	// ERC-6909 claims. The mint transaction is an arbitrage on chain (its
	// gain is the claim) that the events show as one mint, no cycle: none,
	// hidden as v4_triangle_net. The burn transaction exchanges the claim
	// for as much ETH: none.
	"v4_claims_arb_mint": noArb.with(func(e *expectation) { e.hidden = true }),
	"v4_claims_arb_burn": noArb,
}

// scenarioConfig is the engine's configuration for the scenario chain:
// its WETH9 is the wrapped native token; R5's routers are the truth's
// (the Universal Router the fourth phase deploys); its V4 PoolManager is
// the third phase's (truth.json's name poolManager).
func scenarioConfig(tr *Truth) *normalform.Config {
	weth := common.HexToAddress(tr.WrappedNative)
	routers := []normalform.Address{} // none but the scenario chain's own (truth.json's routers)
	for _, r := range tr.Routers {
		routers = append(routers, common.HexToAddress(r))
	}
	var managers []normalform.Address
	for a, name := range tr.Names {
		if name == "poolManager" {
			managers = append(managers, common.HexToAddress(a))
		}
	}
	return normalform.NewConfig(&normalform.Network{
		ID: tr.ChainID, Name: "flowq-scenarios", NativeSymbol: "ETH",
		WrappedNative: []normalform.Address{weth}, PoolManagers: managers,
		Tokens: map[normalform.Address]normalform.TokenInfo{weth: {Symbol: "WETH", Decimals: 18}},
	}, nil, routers)
}

// analyzeFile decodes a bundle with cfg and runs the engine on its single
// transaction.
func analyzeFile(t *testing.T, cfg *normalform.Config, path, wantHash string) *normalform.Analysis {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res := trace.Decode(data, trace.Options{Config: cfg, Source: path})
	for _, e := range res.Errors {
		t.Errorf("%s: %v", path, e)
	}
	if len(res.Txs) != 1 {
		t.Fatalf("%s: decoded %d transactions, want 1", path, len(res.Txs))
	}
	tx := res.Txs[0]
	if !strings.EqualFold(tx.Meta.Hash.Hex(), wantHash) {
		t.Fatalf("%s: decoded tx %s, want %s", path, tx.Meta.Hash.Hex(), wantHash)
	}
	a, err := normalform.Analyze(tx, cfg)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return a
}

// amounts is a balance at one address: token key → signed amount.
type amounts map[string]*big.Int

func (m amounts) String() string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s:%s", k, m[k])
	}
	b.WriteString("}")
	return b.String()
}

func (m amounts) equal(o amounts) bool {
	for k, v := range m {
		if w, ok := o[k]; !ok || w.Cmp(v) != 0 {
			return false
		}
	}
	for k := range o {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

func (m amounts) add(key string, v *big.Int) {
	if m[key] == nil {
		m[key] = new(big.Int)
	}
	m[key].Add(m[key], v)
	if m[key].Sign() == 0 {
		delete(m, key)
	}
}

// engineAt is the engine's balance d at addr, folded with cfg.Fold (WETH
// and ETH are one: the native asset).
func engineAt(t *testing.T, cfg *normalform.Config, d normalform.Delta, addr normalform.Address) amounts {
	t.Helper()
	f, err := cfg.Fold(d.OfAddr(addr))
	if err != nil {
		t.Fatal(err)
	}
	out := amounts{}
	for _, e := range f {
		v := e.Amount.Abs.ToBig()
		if e.Amount.Neg {
			v.Neg(v)
		}
		out.add(e.Token.Key(), v)
	}
	return out
}

// truthFolded is a truth balance (token key → decimal) with the wrapped
// native folded into the native asset, as cfg.Fold does.
func truthFolded(t *testing.T, tr *Truth, m map[string]string) amounts {
	t.Helper()
	weth := normalform.FungibleToken(common.HexToAddress(tr.WrappedNative)).Key()
	out := amounts{}
	for k, s := range m {
		v, ok := new(big.Int).SetString(s, 10)
		if !ok {
			t.Fatalf("truth amount %q", s)
		}
		if k == weth {
			k = normalform.NativeToken.Key()
		}
		out.add(k, v)
	}
	return out
}

func dec(t *testing.T, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("bad decimal %q", s)
	}
	return v
}

func hasReason(a *normalform.Analysis, r normalform.Reason) bool {
	return slices.Contains(a.Reasons, r)
}

// arbitrageCycles are the analysis's chains labelled arbitrage.
func arbitrageCycles(a *normalform.Analysis) []*normalform.Chain {
	var out []*normalform.Chain
	for _, c := range a.Cycles {
		if c.Label == normalform.Arbitrage {
			out = append(out, c)
		}
	}
	return out
}

// TestVerdictsAgainstTruth runs the engine on every scenario bundle, in
// both trace shapes, and checks its verdict, tier, reasons and gross
// profit against the design table and the chain's truth; and that both
// shapes give the same verdict, tier, gross and hashes.
func TestVerdictsAgainstTruth(t *testing.T) {
	tr := loadTruth(t)
	cfg := scenarioConfig(tr)
	seen := map[string]bool{}
	for i := range tr.Scenarios {
		tc := &tr.Scenarios[i]
		seen[tc.Name] = true
		t.Run(tc.Name, func(t *testing.T) {
			exp, ok := expectedVerdicts[tc.Name]
			if !ok {
				t.Fatalf("no expected classification for scenario %s: add it to expectedVerdicts", tc.Name)
			}
			checkDesignAgainstTruth(t, tr, tc, exp)
			byShape := map[string]*normalform.Analysis{}
			for _, shape := range []string{"geth", "parity"} {
				file := map[string]string{"geth": tc.Geth, "parity": tc.Parity}[shape]
				a := analyzeFile(t, cfg, filepath.Join(examplesDir, file), tc.Tx)
				byShape[shape] = a
				checkVerdict(t, tr, tc, cfg, exp, shape, a)
			}
			g, p := byShape["geth"], byShape["parity"]
			if g.Verdict != p.Verdict || g.Tier != p.Tier {
				t.Errorf("geth %s (%s), parity %s (%s)", g.Verdict, g.Tier, p.Verdict, p.Tier)
			}
			if !slices.Equal(g.Reasons, p.Reasons) {
				t.Errorf("reasons: geth %v, parity %v", g.Reasons, p.Reasons)
			}
			if gg, pg := engineAt(t, cfg, g.Gross, g.Recipient), engineAt(t, cfg, p.Gross, p.Recipient); !gg.equal(pg) {
				t.Errorf("gross: geth %v, parity %v", gg, pg)
			}
			if g.Hashes() != p.Hashes() {
				t.Errorf("hashes: geth %+v, parity %+v", g.Hashes(), p.Hashes())
			}
		})
	}
	for name := range expectedVerdicts {
		if !seen[name] {
			t.Errorf("scenario %s is in the table but not in the truth", name)
		}
	}
}

// checkDesignAgainstTruth makes sure the table agrees with what the chain
// did: an arbitrage in the table is one in the truth, and its net after
// gas and builder payment has the sign the design gave it.
func checkDesignAgainstTruth(t *testing.T, tr *Truth, tc *TruthCase, exp expectation) {
	t.Helper()
	wantClass := "none"
	if exp.verdict != normalform.VerdictNone || exp.hidden {
		wantClass = "arbitrage"
	}
	if tc.Class != wantClass {
		t.Errorf("the truth's class is %s, the table's %s", tc.Class, wantClass)
	}
	if tc.Class == "arbitrage" && exp.gain {
		// The whole gain less the gas and the builder payment.
		if tc.Gain == nil {
			t.Fatalf("the truth has no origin_gain")
		}
		net := new(big.Int).Sub(dec(t, tc.Gain[normalform.AddrKey(MainnetWETH)]), dec(t, tc.GasCost))
		net.Sub(net, dec(t, tc.CoinbasePayment))
		if exp.netPositive != (net.Sign() > 0) {
			t.Errorf("the design says net positive = %v; the chain: gain %v, gas %s, coinbase payment %s", exp.netPositive, tc.Gain, tc.GasCost, tc.CoinbasePayment)
		}
		return
	}
	if tc.Class != "arbitrage" || !exp.gross {
		return // the net of an inner cycle's contract is not the sender's
	}
	g := truthFolded(t, tr, tc.Profit)[normalform.NativeToken.Key()]
	if g == nil {
		g = new(big.Int)
	}
	net := new(big.Int).Sub(g, dec(t, tc.GasCost))
	if exp.netPositive != (net.Sign() > 0) {
		t.Errorf("the design says net positive = %v; the chain: gross %s, gas %s, coinbase payment %s", exp.netPositive, g, tc.GasCost, tc.CoinbasePayment)
	}
}

func checkVerdict(t *testing.T, tr *Truth, tc *TruthCase, cfg *normalform.Config, exp expectation, shape string, a *normalform.Analysis) {
	t.Helper()
	if a.Verdict != exp.verdict || a.Tier != exp.tier {
		t.Errorf("%s: verdict %s (%s), want %s (%s); reasons %v", shape, a.Verdict, a.Tier, exp.verdict, exp.tier, a.Reasons)
	}
	for _, r := range exp.reasons {
		if !hasReason(a, r) {
			t.Errorf("%s: reasons %v lack %s", shape, a.Reasons, r)
		}
	}
	addrOf := func(name string) normalform.Address {
		for a, n := range tr.Names {
			if n == name {
				return common.HexToAddress(a)
			}
		}
		t.Fatalf("no address named %s in the truth", name)
		return normalform.Address{}
	}
	for _, n := range exp.notAt {
		for _, det := range a.Detections {
			if det.Origin == addrOf(n) {
				t.Errorf("%s: an arbitrage is detected at %s (path %s, gain %s)", shape, n, det.Path, det.Gain)
			}
		}
	}
	if exp.verdict == normalform.VerdictNone {
		if len(a.Detections) > 0 {
			t.Errorf("%s: %d detections (path %s) in a transaction with none", shape, len(a.Detections), a.Path())
		}
		if exp.hidden {
			// What the events do show: the net profit paid to the bot.
			got, want := engineAt(t, cfg, a.Gross, a.Recipient), truthFolded(t, tr, tc.Profit)
			if !got.equal(want) {
				t.Errorf("%s: the balance at the recipient %v, the chain's gross at %s %v", shape, got, tc.OriginName, want)
			}
		}
		return
	}
	// Every detection has the independent checker's witness, which the
	// checker verifies again over the decoded transfers.
	for _, det := range a.Detections {
		if det.Witness == nil {
			t.Errorf("%s: a detection at %s (path %s) without a witness", shape, normalform.AddrKey(det.Origin), det.Path)
			continue
		}
		if err := witness.Verify(normalform.CheckerTransfers(a.Tx.Transfers), cfg.TokenEq, det.Witness); err != nil {
			t.Errorf("%s: the witness at %s does not verify: %v", shape, normalform.AddrKey(det.Origin), err)
		}
	}
	if exp.path != normalform.PathNone && a.Path() != exp.path {
		t.Errorf("%s: path %s, the design's %s", shape, a.Path(), exp.path)
	}
	if exp.origin != "" {
		checkFlow(t, tr, tc, cfg, exp, shape, a, addrOf(exp.origin))
	}
	truthGross := truthFolded(t, tr, tc.Profit)
	if exp.gross {
		got := engineAt(t, cfg, a.Gross, a.Recipient)
		want := truthGross
		if exp.builder {
			// The engine sets builder payments aside as costs: its gross
			// is before them. The chain's balance at the bot is after
			// them (the bot paid the coinbase), so gross − builder payment
			// is the chain's gross.
			b := a.Costs.Builder.ToBig()
			got.add(normalform.NativeToken.Key(), new(big.Int).Neg(b))
		}
		if !got.equal(want) {
			t.Errorf("%s: gross at the principals %v, the chain's gross at %s %v", shape, got, tc.OriginName, want)
		}
		// Net after gas and builder payment: the chain's gross less the
		// gas the sender paid.
		if a.Net == nil {
			t.Errorf("%s: net unknown with a receipt", shape)
		} else {
			wantNet := amounts{}
			for k, v := range want {
				wantNet.add(k, v)
			}
			wantNet.add(normalform.NativeToken.Key(), new(big.Int).Neg(dec(t, tc.GasCost)))
			if gotNet := engineAt(t, cfg, a.Net, a.Recipient); !gotNet.equal(wantNet) {
				t.Errorf("%s: net %v, the chain's gross less gas %v", shape, gotNet, wantNet)
			}
		}
	}
	if exp.builder {
		if got := a.Costs.Builder.ToBig(); got.Cmp(dec(t, tc.CoinbasePayment)) != 0 {
			t.Errorf("%s: builder payment %s, the chain's coinbase payment %s", shape, got, tc.CoinbasePayment)
		}
	}
	if exp.inner {
		origin := common.HexToAddress(tc.Origin)
		if len(a.Detections) != 1 {
			t.Fatalf("%s: %d detections, want the inner one", shape, len(a.Detections))
		}
		det := a.Detections[0]
		if det.Origin != origin || det.Path != normalform.PathInner {
			t.Errorf("%s: the arbitrage is detected at %s (path %s), the truth's origin is %s (%s), path inner", shape, normalform.AddrKey(det.Origin), det.Path, tc.Origin, tc.OriginName)
		}
		c := det.Chains[0]
		if got := engineAt(t, cfg, c.Balance(), origin); !got.equal(truthGross) {
			t.Errorf("%s: δ at %s %v, the chain's gross %v", shape, tc.OriginName, got, truthGross)
		}
		if a.Principal(origin) {
			t.Errorf("%s: the inner origin %s is a principal", shape, tc.OriginName)
		}
	}
}

// checkFlow checks an issue-14 expectation: an arbitrage cycle at the
// origin; the coalition's gross and net against the truth's whole gain;
// payouts not left over.
func checkFlow(t *testing.T, tr *Truth, tc *TruthCase, cfg *normalform.Config, exp expectation, shape string, a *normalform.Analysis, origin normalform.Address) {
	t.Helper()
	if common.HexToAddress(tc.Origin) != origin {
		t.Fatalf("the table's origin %s is not the truth's %s", exp.origin, tc.OriginName)
	}
	var origins []string
	found := false
	for _, det := range a.Detections {
		origins = append(origins, fmt.Sprintf("%s:%s", normalform.AddrKey(det.Origin), det.Path))
		found = found || (det.Origin == origin && (exp.path == normalform.PathNone || det.Path == exp.path))
	}
	if !found {
		t.Errorf("%s: no arbitrage detected at %s by path %s; detections (origin:path) %v", shape, exp.origin, exp.path, origins)
	}
	// The coalition: sender, recipient and origin, each counted once.
	coalition := func(d normalform.Delta) amounts {
		out := amounts{}
		seen := map[normalform.Address]bool{}
		for _, x := range []normalform.Address{a.Recipient, a.Sender, origin} {
			if seen[x] {
				continue
			}
			seen[x] = true
			for k, v := range engineAt(t, cfg, d, x) {
				out.add(k, v)
			}
		}
		return out
	}
	if exp.gain {
		want := truthFolded(t, tr, tc.Gain)
		if got := coalition(a.Gross); !got.equal(want) {
			t.Errorf("%s: gross %v, the truth's gain at %s %v (builder payment and payouts added back)", shape, got, tc.OriginName, want)
		}
		wantNet := amounts{}
		for k, v := range want {
			wantNet.add(k, v)
		}
		wantNet.add(normalform.NativeToken.Key(), new(big.Int).Neg(dec(t, tc.GasCost)))
		wantNet.add(normalform.NativeToken.Key(), new(big.Int).Neg(dec(t, tc.CoinbasePayment)))
		if a.Net == nil {
			t.Errorf("%s: net unknown with a receipt", shape)
		} else if got := coalition(a.Net); !got.equal(wantNet) {
			t.Errorf("%s: net %v, the truth's gain less gas and builder payment %v", shape, got, wantNet)
		}
	}
	if exp.payouts {
		if len(tc.Payouts) == 0 {
			t.Fatalf("the truth lists no payouts")
		}
		for _, p := range tc.Payouts {
			to := common.HexToAddress(p.To)
			for _, x := range a.Leftover {
				if x.From == origin && x.To == to {
					t.Errorf("%s: the payout to %s (#%d, %s) is a leftover", shape, p.ToName, x.Pos, x.Amount.Dec())
				}
			}
		}
	}
}

// starDesign is a star scenario as built: the target (convergence) token
// and the arm tokens.
type starDesign struct {
	target string
	arms   []string
}

var starDesigns = map[string]starDesign{
	"star_r": {"BEAN", armsR},
	"star_s": {"KABOSU", armsS},
}

// routeTransfer is one transfer the star's design makes: from, to, token.
type routeTransfer struct {
	from, to, token string // names
	what            string
}

// starRoute lists a star's route transfers by design: the hub pays the bot
// WETH; in each arm the bot pays X/WETH WETH, X/WETH pays X/T its X, X/T
// pays the hub T.
func starRoute(d starDesign) (hub routeTransfer, arms [][3]routeTransfer) {
	hubName := poolName(d.target, "WETH")
	hub = routeTransfer{hubName, "bot", "WETH", "hub pays the bot"}
	for _, x := range d.arms {
		xw, xt := poolName(x, "WETH"), poolName(x, d.target)
		arms = append(arms, [3]routeTransfer{
			{"bot", xw, "WETH", "bot pays " + xw},
			{xw, xt, x, xw + " pays " + xt},
			{xt, hubName, d.target, xt + " pays the hub"},
		})
	}
	return hub, arms
}

// poolName is the name of the V3 pool of a and b, as setup creates it.
func poolName(a, b string) string {
	for _, p := range starPools {
		if (p.a == a && p.b == b) || (p.a == b && p.b == a) {
			return v3PoolName + p.a + "/" + p.b
		}
	}
	panic("no star pool " + a + "/" + b)
}

// TestStarsReduceAsTxR checks the paper's reduction of tx_R on star_r and
// star_s: one arbitrage cycle over every route transfer, reached by R1 and
// R6 in each arm, merges, a closing R6 and R14; the two differ in shape
// and share the family, the star family.
func TestStarsReduceAsTxR(t *testing.T) {
	tr := loadTruth(t)
	cfg := scenarioConfig(tr)
	byName := map[string]*TruthCase{}
	for i := range tr.Scenarios {
		byName[tr.Scenarios[i].Name] = &tr.Scenarios[i]
	}
	addrOf := map[string]normalform.Address{}
	for a, n := range tr.Names {
		addrOf[n] = common.HexToAddress(a)
	}
	hashes := map[string]map[string]normalform.Hashes{}
	for _, name := range []string{"star_r", "star_s"} {
		d := starDesigns[name]
		tc := byName[name]
		if tc == nil {
			t.Fatalf("%s is missing from the truth", name)
		}
		hashes[name] = map[string]normalform.Hashes{}
		for _, shape := range []string{"geth", "parity"} {
			file := map[string]string{"geth": tc.Geth, "parity": tc.Parity}[shape]
			a := analyzeFile(t, cfg, filepath.Join(examplesDir, file), tc.Tx)
			hashes[name][shape] = a.Hashes()
			checkStar(t, cfg, name+"/"+shape, d, addrOf, a)
		}
	}
	for _, shape := range []string{"geth", "parity"} {
		r, s := hashes["star_r"][shape], hashes["star_s"][shape]
		if r.Shape == s.Shape {
			t.Errorf("%s: star_r (3 arms) and star_s (6 arms) have the same shape hash %v", shape, r.Shape)
		}
		if r.Family != s.Family {
			t.Errorf("%s: star_r and star_s have different family hashes: %v, %v", shape, r.Family, s.Family)
		}
	}
}

func checkStar(t *testing.T, cfg *normalform.Config, label string, d starDesign, addrOf map[string]normalform.Address, a *normalform.Analysis) {
	t.Helper()
	token := func(name string) normalform.Token { return normalform.FungibleToken(addrOf[name]) }
	// Find each designed transfer in the transaction (each exactly once).
	find := func(rt routeTransfer) *normalform.Transfer {
		var hit *normalform.Transfer
		for i := range a.Tx.Transfers {
			x := &a.Tx.Transfers[i]
			if x.From == addrOf[rt.from] && x.To == addrOf[rt.to] && x.Token == token(rt.token) {
				if hit != nil {
					t.Errorf("%s: %s (%s → %s %s) appears twice", label, rt.what, rt.from, rt.to, rt.token)
				}
				hit = x
			}
		}
		if hit == nil {
			t.Fatalf("%s: no transfer %s (%s → %s %s)", label, rt.what, rt.from, rt.to, rt.token)
		}
		return hit
	}
	hubRT, armRTs := starRoute(d)
	hub := find(hubRT)
	route := map[int32]string{hub.Pos: hubRT.what}
	arms := make([][3]*normalform.Transfer, len(armRTs))
	for i, rts := range armRTs {
		for j, rt := range rts {
			arms[i][j] = find(rt)
			route[arms[i][j].Pos] = rt.what
		}
	}
	if want := 1 + 3*len(d.arms); len(route) != want || len(a.Tx.Transfers) != want {
		t.Errorf("%s: %d route transfers, %d in the transaction, want %d", label, len(route), len(a.Tx.Transfers), want)
	}

	// Exactly one arbitrage cycle, holding every route transfer and no other.
	cs := arbitrageCycles(a)
	if len(cs) != 1 || len(a.Cycles) != 1 {
		t.Fatalf("%s: %d arbitrage cycles (%d cycles), want exactly one", label, len(cs), len(a.Cycles))
	}
	c := cs[0]
	in := map[int32]bool{}
	for _, x := range c.Transfers(nil) {
		in[x.Pos] = true
		if _, ok := route[x.Pos]; !ok {
			t.Errorf("%s: the cycle holds #%d, not a route transfer", label, x.Pos)
		}
	}
	for pos, what := range route {
		if !in[pos] {
			t.Errorf("%s: the cycle lacks #%d (%s)", label, pos, what)
		}
	}
	if c.Origin() != addrOf["bot"] || len(a.Leftover) != 0 {
		t.Errorf("%s: the cycle closes at %s with %d leftovers, want the bot and none", label, normalform.AddrKey(c.Origin()), len(a.Leftover))
	}

	// The rules: per arm, R1 joins the bot's WETH payment with X/WETH's X
	// and R6 appends X/T's payment to the hub; merges (R7 or R13) join
	// the arms; R6 closes with the hub's WETH to the bot; R14 labels it.
	var fired []normalform.Step
	for _, s := range a.Steps {
		if s.Rule != normalform.Lift {
			fired = append(fired, s)
		}
	}
	op := func(x *normalform.Transfer) string { return fmt.Sprintf("#%d", x.Pos) }
	stepWith := func(r normalform.Rule, operands ...string) int {
		for i, s := range fired {
			if s.Rule != r {
				continue
			}
			ok := true
			for _, o := range operands {
				ok = ok && slices.Contains(s.Operands, o)
			}
			if ok {
				return i
			}
		}
		return -1
	}
	last := -1
	for i, arm := range arms {
		r1 := stepWith(normalform.R1, op(arm[0]), op(arm[1]))
		r6 := stepWith(normalform.R6, op(arm[2]))
		if r1 < 0 || r6 < 0 || r6 < r1 {
			t.Errorf("%s: arm %d (%s): R1 on %s %s at step %d, R6 on %s at step %d; want both, R1 first", label, i+1, d.arms[i], op(arm[0]), op(arm[1]), r1, op(arm[2]), r6)
		}
		last = max(last, r6)
	}
	merges := 0
	for _, s := range fired {
		if s.Rule == normalform.R7 || s.Rule == normalform.R13 {
			merges++
		}
	}
	if merges == 0 {
		t.Errorf("%s: no merge (R7, R13) among %s", label, ruleList(fired))
	}
	cycle := fmt.Sprintf("C%d", c.ID)
	closing := stepWith(normalform.R6, op(hub))
	if closing < 0 || closing < last || fired[closing].Result != cycle {
		t.Errorf("%s: the closing R6 on %s (step %d, after the arms' last at %d) should build %s; rules %s", label, op(hub), closing, last, cycle, ruleList(fired))
	}
	r14 := -1
	for i, s := range fired {
		if s.Rule == normalform.R14 && s.Result == cycle {
			r14 = i
		}
	}
	if r14 < 0 || r14 < closing {
		t.Errorf("%s: no R14 labelling %s after the closing R6; rules %s", label, cycle, ruleList(fired))
	}
	if arms := show.Arms(cfg, c.Left, nil); len(arms) != len(d.arms) {
		t.Errorf("%s: the cycle's merge has %d arms, want %d", label, len(arms), len(d.arms))
	}

	// The star family G_{WETH, target}.
	alpha, conv, ok, flash := a.StarFamily(cfg)
	if !ok || flash {
		t.Errorf("%s: StarFamily ok %v flash %v, want a star without flash loan", label, ok, flash)
	} else if !cfg.TokenEq(alpha, token("WETH")) || conv != token(d.target) {
		t.Errorf("%s: star family G_{%s,%s}, want G_{WETH,%s}", label, cfg.TokenName(alpha), cfg.TokenName(conv), d.target)
	}
}

func ruleList(steps []normalform.Step) string {
	var r []string
	for _, s := range steps {
		r = append(r, s.Rule.String())
	}
	return strings.Join(r, " ")
}
