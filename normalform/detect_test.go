package normalform_test

import (
	"testing"

	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
	"github.com/flowq/flowq/normalform/show"
	"github.com/flowq/flowq/normalform/witness"
)

// The shapes of issue 14, by hand: what the fixpoint leaves and what the
// stage after it reads. Each positive case says its path, origin and gain;
// each negative one must not be an arbitrage on any path.

// wrapBot: the sender's ETH in, wrapped, cycled through two pools,
// unwrapped, the principal returned to the sender, the builder tipped.
// The fixpoint reads the walk from a pool; the bot's surplus sits in it.
func wrapBot(b *gen.Builder) *Tx {
	return b.Tx("EOA", "Bot", 100000, b.F("EOA", "Bot",
		b.T("EOA", "Bot", "1", "ETH", "EOA"),
		b.F("Bot", "WETH", b.T("Bot", "WETH", "1", "ETH", "Bot"), b.T("WETH", "Bot", "1", "WETH", "Bot", "mint")),
		b.F("Bot", "WETH", b.T("Bot", "P1", "1", "WETH", "Bot")),
		b.F("Bot", "P1", b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
		b.F("Bot", "P2", b.T("P2", "Bot", "1.1", "WETH", "P2"), b.Static("P2", "WETH")),
		b.F("Bot", "WETH", b.T("Bot", "WETH", "1.1", "WETH", "Bot", "burn"), b.F("WETH", "Bot", b.T("WETH", "Bot", "1.1", "ETH", "WETH"))),
		b.F("Bot", "EOA", b.T("Bot", "EOA", "1", "ETH", "Bot")),
		b.F("Bot", "builder", b.T("Bot", "builder", "0.01", "ETH", "Bot"))))
}

// wrapBotSelfPay: wrapBot where the first pool also moves ETH to itself:
// the fixpoint then closes the walk at that pool as a promoted arbitrage
// no witness supports; read from the bot, where it gains, it has one.
func wrapBotSelfPay(b *gen.Builder) *Tx {
	return b.Tx("EOA", "Bot", 100000, b.F("EOA", "Bot",
		b.T("EOA", "Bot", "1", "ETH", "EOA"),
		b.F("Bot", "WETH", b.T("Bot", "WETH", "1", "ETH", "Bot"), b.T("WETH", "Bot", "1", "WETH", "Bot", "mint")),
		b.F("Bot", "WETH", b.T("Bot", "P1", "1", "WETH", "Bot")),
		b.F("Bot", "P1", b.F("P1", "P1", b.T("P1", "P1", "0.5", "ETH", "P1")), b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
		b.F("Bot", "P2", b.T("P2", "Bot", "1.1", "WETH", "P2"), b.Static("P2", "WETH")),
		b.F("Bot", "WETH", b.T("Bot", "WETH", "1.1", "WETH", "Bot", "burn"), b.F("WETH", "Bot", b.T("WETH", "Bot", "1.1", "ETH", "WETH"))),
		b.F("Bot", "EOA", b.T("Bot", "EOA", "1", "ETH", "Bot")),
		b.F("Bot", "builder", b.T("Bot", "builder", "0.01", "ETH", "Bot"))))
}

// flashFirst: a pool pays the executor WETH first; the executor sells part
// of it through two pools, the last of which repays the first in USDC;
// then it unwraps, tips the builder and pays its owner.
func flashFirst(b *gen.Builder) *Tx {
	return b.Tx("EOA", "Exec", 100000, b.F("EOA", "Exec",
		b.F("Exec", "Pool1",
			b.T("Pool1", "Exec", "10", "WETH", "Pool1"),
			b.F("Pool1", "Exec",
				b.F("Exec", "WETH", b.T("Exec", "P2", "9", "WETH", "Exec")),
				b.F("Exec", "P2", b.T("P2", "P3", "500", "X", "P2"), b.Static("P2", "X")),
				b.F("Exec", "P3", b.T("P3", "Pool1", "30000", "USDC", "P3"), b.Static("P3", "USDC"))),
			b.Static("Pool1", "USDC")),
		b.F("Exec", "WETH", b.T("Exec", "WETH", "1", "WETH", "Exec", "burn"), b.F("WETH", "Exec", b.T("WETH", "Exec", "1", "ETH", "WETH"))),
		b.F("Exec", "builder", b.T("Exec", "builder", "0.1", "ETH", "Exec")),
		b.F("Exec", "Owner", b.T("Exec", "Owner", "0.5", "ETH", "Exec"))))
}

// controller: the EOA calls a controller, which calls an executor that
// runs the cycle and keeps the gain.
func controller(b *gen.Builder, back string) *Tx {
	return b.Tx("EOA", "Ctl", 100000, b.F("EOA", "Ctl", b.F("Ctl", "Exec",
		b.F("Exec", "WETH", b.T("Exec", "P1", "1", "WETH", "Exec")),
		b.F("Exec", "P1", b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
		b.F("Exec", "P2", b.T("P2", "Exec", back, "WETH", "P2"), b.Static("P2", "WETH")))))
}

// payout: a cycle at the bot, then part of the gain to a cold wallet.
func payout(b *gen.Builder, paid string) *Tx {
	return b.Tx("EOA", "Bot", 100000, b.F("EOA", "Bot",
		b.F("Bot", "WETH", b.T("Bot", "P1", "1", "WETH", "Bot")),
		b.F("Bot", "P1", b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
		b.F("Bot", "P2", b.T("P2", "Bot", "1.1", "WETH", "P2"), b.Static("P2", "WETH")),
		b.F("Bot", "WETH", b.T("Bot", "Cold", paid, "WETH", "Bot"))))
}

// lenderFee: a lender sends WETH to a borrower, which swaps it through two
// pools at a loss and repays the lender with a fee from its own balance:
// the lender gains in the token it lent, but only from its borrower.
func lenderFee(b *gen.Builder) *Tx {
	return b.Tx("EOA", "Borrower", 100000, b.F("EOA", "Borrower",
		b.F("Borrower", "Lender",
			b.F("Lender", "WETH", b.T("Lender", "Borrower", "100", "WETH", "Lender")),
			b.F("Lender", "Borrower",
				b.F("Borrower", "WETH", b.T("Borrower", "P1", "100", "WETH", "Borrower")),
				b.F("Borrower", "P1", b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
				b.F("Borrower", "P2", b.T("P2", "Borrower", "99", "WETH", "P2"), b.Static("P2", "WETH")),
				b.F("Borrower", "WETH", b.T("Borrower", "Lender", "100.09", "WETH", "Borrower"))),
			b.Static("Lender", "WETH"))))
}

// feeRouter: a user swaps USDC for WETH through an aggregator that keeps
// part of the USDC: the router gains in the token it received, on the
// user's trade.
func feeRouter(b *gen.Builder) *Tx {
	return b.Tx("User", "Router", 100000, b.F("User", "Router",
		b.F("Router", "USDC", b.T("User", "Router", "1000", "USDC", "Router")),
		b.F("Router", "USDC", b.T("Router", "Pool", "997", "USDC", "Router")),
		b.F("Router", "Pool", b.T("Pool", "User", "0.3", "WETH", "Pool"), b.Static("Pool", "WETH"))))
}

// cascadeFIFO: three pools lend to the bot first (WETH from PZ, Z from
// PA and PB), each calling it back; in the innermost callback the bot
// repays them in the order they lent: PZ in Z, then PA and PB in A and B
// bought with WETH. The bot ends with more WETH and no other change, and
// the fixpoint closes no cycle at it.
func cascadeFIFO(b *gen.Builder) *Tx {
	return b.Tx("EOA", "Bot", 100000, b.F("EOA", "Bot",
		b.F("Bot", "PZ", b.T("PZ", "Bot", "0.3", "WETH", "PZ"), b.F("PZ", "Bot",
			b.F("Bot", "PA", b.T("PA", "Bot", "100", "Z", "PA"), b.F("PA", "Bot",
				b.F("Bot", "PB", b.T("PB", "Bot", "120", "Z", "PB"), b.F("PB", "Bot",
					b.F("Bot", "Z", b.T("Bot", "PZ", "220", "Z", "Bot")),
					b.F("Bot", "WETH", b.T("Bot", "PWA", "0.1", "WETH", "Bot")),
					b.F("Bot", "PWA", b.T("PWA", "Bot", "50", "A", "PWA")),
					b.F("Bot", "A", b.T("Bot", "PA", "50", "A", "Bot")),
					b.F("Bot", "WETH", b.T("Bot", "PWB", "0.12", "WETH", "Bot")),
					b.F("Bot", "PWB", b.T("PWB", "Bot", "60", "B", "PWB")),
					b.F("Bot", "B", b.T("Bot", "PB", "60", "B", "Bot"))))))))))
}

// seizeLiquidation: Compound's shape. A flash loan of DAI repays a
// borrower's debt; the collateral's cToken moves the borrower's cCOL to
// the liquidator on its own authority (seize: σ is the token); the
// liquidator redeems it for COL, sells COL for DAI and repays the loan.
// It settles to a gain in DAI and zero elsewhere, as an arbitrage would.
func seizeLiquidation(b *gen.Builder) *Tx {
	return b.Tx("EOA", "Liq", 100000, b.F("EOA", "Liq",
		b.F("Liq", "Lender", b.T("Lender", "Liq", "1000", "DAI", "Lender"), b.F("Lender", "Liq",
			b.F("Liq", "cDAI", b.T("Liq", "cDAI", "1000", "DAI", "cDAI"),
				b.F("cDAI", "cCOL", b.T("Borrower", "Liq", "50", "cCOL", "cCOL"))),
			b.F("Liq", "cCOL", b.T("Liq", "cCOL", "50", "cCOL", "cCOL"), b.T("cCOL", "Liq", "600", "COL", "cCOL")),
			b.F("Liq", "COL", b.T("Liq", "Pool", "600", "COL", "Liq")),
			b.F("Liq", "Pool", b.T("Pool", "Liq", "1020", "DAI", "Pool")),
			b.F("Liq", "DAI", b.T("Liq", "Lender", "1001", "DAI", "Liq"))))))
}

func TestDetectionPaths(t *testing.T) {
	cases := []struct {
		name    string
		tx      func(b *gen.Builder) *Tx
		verdict Verdict
		path    Path
		origin  string
		gain    string // the detection's gain, in its unit
		payouts int
		reasons string
	}{
		{"wrap, cycle, unwrap, refund: rotation at the bot", wrapBot, VerdictArbitrage, PathRotation, "Bot", "0.1", 0, "builder_payment"},
		{"the same with a pool paying itself: an unwitnessed fixpoint walk rotated", wrapBotSelfPay, VerdictArbitrage, PathRotation, "Bot", "0.1", 0, "builder_payment"},
		{"the pool pays first: the executor's gain, a payout", flashFirst, VerdictArbitrage, PathFixpoint, "Exec", "1", 1, "builder_payment,payout"},
		{"executor behind a controller: inner, covers its cost", func(b *gen.Builder) *Tx { return controller(b, "1.1") },
			VerdictArbitrage, PathInner, "Exec", "0.1", 0, "inner_cycle"},
		{"executor behind a controller: inner, below its cost", func(b *gen.Builder) *Tx { return controller(b, "1.00001") },
			VerdictWarning, PathInner, "Exec", "0.00001", 0, "neg_profit,final_neg,inner_cycle"},
		{"payout to a cold wallet: not a leftover", func(b *gen.Builder) *Tx { return payout(b, "0.05") },
			VerdictArbitrage, PathFixpoint, "Bot", "0.1", 1, "payout"},
		{"a transfer beyond the gain is not a payout", func(b *gen.Builder) *Tx { return payout(b, "0.2") },
			VerdictWarning, PathFixpoint, "Bot", "0.1", 0, "leftovers,unexplained"},
		{"a lender repaid with a fee is not an arbitrage", lenderFee, VerdictNone, PathNone, "", "", 0, ""},
		{"a router's fee on a user's swap is not an arbitrage", feeRouter, VerdictNone, PathNone, "", "", 0, ""},
		{"flash swaps repaid first-lent-first: everything the bot settled", cascadeFIFO, VerdictArbitrage, PathBundle, "Bot", "0.08", 0, ""},
		{"a liquidation that seizes collateral is not an arbitrage", seizeLiquidation, VerdictNone, PathNone, "", "", 0, ""},
	}
	cfg := DefaultConfig()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tx := c.tx(&gen.Builder{})
			a := analyze(t, tx)
			if a.Verdict != c.verdict || a.Path() != c.path {
				t.Fatalf("verdict %s (%s) path %q, want %s path %q; reasons %v", a.Verdict, a.Tier, a.Path(), c.verdict, c.path, a.Reasons)
			}
			if c.reasons != "" && reasons(a) != c.reasons {
				t.Errorf("reasons %q, want %q", reasons(a), c.reasons)
			}
			if c.path == PathNone {
				if len(a.Detections) != 0 {
					t.Errorf("%d detections, want none", len(a.Detections))
				}
				return
			}
			det := a.Detections[0]
			if det.Origin != gen.Addr(c.origin) {
				t.Errorf("origin %s, want %s", det.Origin.Hex(), c.origin)
			}
			if want := gen.Units(c.gain); det.Gain.Neg || det.Gain.Abs != want {
				t.Errorf("gain %s, want %s", det.Gain, c.gain)
			}
			if len(a.Payouts) != c.payouts {
				t.Errorf("%d payouts, want %d", len(a.Payouts), c.payouts)
			}
			if err := witness.Verify(CheckerTransfers(tx.Transfers), cfg.TokenEq, det.Witness); err != nil {
				t.Errorf("the detection's witness: %v", err)
			}
			if det.Witness.V != det.Origin {
				t.Errorf("witness at %s, detection at %s", det.Witness.V.Hex(), det.Origin.Hex())
			}
		})
	}
}

// TestGrossIsTheFlatSum: the gross reported is the coalition's balance
// over every transfer, with builder payments charged as costs and payouts
// added back; net is gross less costs; kept is net less payouts.
func TestGrossIsTheFlatSum(t *testing.T) {
	cfg := DefaultConfig()
	for name, build := range map[string]func(b *gen.Builder) *Tx{
		"wrapBot": wrapBot, "flashFirst": flashFirst, "payout": func(b *gen.Builder) *Tx { return payout(b, "0.05") },
		"controller": func(b *gen.Builder) *Tx { return controller(b, "1.1") }, "feeRouter": feeRouter,
	} {
		tx := build(&gen.Builder{})
		a := analyze(t, tx)
		var flat Delta
		for i := range tx.Transfers {
			tr := &tx.Transfers[i]
			in, out := a.InCoalition(tr.To), a.InCoalition(tr.From)
			if in == out {
				continue
			}
			var err error
			flat, err = flat.Sum(Delta{{Addr: a.Recipient, Token: tr.Token, Amount: Signed{Neg: out, Abs: tr.Amount}}})
			if err != nil {
				t.Fatal(err)
			}
		}
		back := Delta{{Addr: a.Recipient, Token: NativeToken, Amount: Signed{Abs: a.Costs.Builder}}}
		for _, p := range a.Payouts {
			back = append(back, DeltaEntry{Addr: a.Recipient, Token: p.Token, Amount: Signed{Abs: p.Amount}})
		}
		want := flat
		for _, e := range back {
			var err error
			if want, err = want.Sum(Delta{e}); err != nil {
				t.Fatal(err)
			}
		}
		wf, _ := cfg.Fold(want)
		gf, _ := cfg.Fold(a.Gross)
		if show.FormatDelta(cfg, wf) != show.FormatDelta(cfg, gf) {
			t.Errorf("%s: gross %s, the flat sum with builder payments and payouts added back %s", name, show.FormatDelta(cfg, gf), show.FormatDelta(cfg, wf))
		}
		if a.Costs.Known {
			n, _ := gf.Sum(Delta{{Addr: a.Recipient, Token: NativeToken, Amount: Signed{Neg: true, Abs: a.Costs.Total}}})
			if show.FormatDelta(cfg, n) != show.FormatDelta(cfg, a.Net) {
				t.Errorf("%s: net %s, gross less costs %s", name, show.FormatDelta(cfg, a.Net), show.FormatDelta(cfg, n))
			}
		}
	}
}

// TestPathsInOrder: Analysis.Path picks the smallest path value, which
// relies on Paths listing the paths in the order of their values.
func TestPathsInOrder(t *testing.T) {
	for i, p := range Paths {
		if int(p) != i+1 {
			t.Errorf("Paths[%d] = %s (%d): Path() needs Paths in the order of the values", i, p, p)
		}
	}
}
