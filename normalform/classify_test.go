package normalform_test

import (
	"testing"

	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// route is Figure 1(a) at the bot SC: 1 WETH out, back `back` WETH, plus
// extra transfers at the end of the root frame.
func route(b *gen.Builder, back string, extra ...*Node) *Node {
	kids := []*Node{
		b.T("SC", "P1", "1", "WETH", "SC"),
		b.F("SC", "P1", b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
		b.F("SC", "P2", b.T("P2", "SC", back, "WETH", "P2"), b.Static("P2", "WETH")),
	}
	return b.F("EOA", "SC", append(kids, extra...)...)
}

func TestClassification(t *testing.T) {
	cases := []struct {
		name    string
		build   func(b *gen.Builder) *Tx
		verdict Verdict
		tier    Tier
		why     string
		net     string // folded net in ETH, "" when unknown
	}{
		{"confirmed: positive net after gas", func(b *gen.Builder) *Tx { return b.Tx("EOA", "SC", 100000, route(b, "1.1")) },
			VerdictArbitrage, TierConfirmed, "", "0.0999"},
		{"builder payment is a cost, not a leftover", func(b *gen.Builder) *Tx {
			return b.Tx("EOA", "SC", 100000, route(b, "1.1", b.F("SC", "builder", b.T("SC", "builder", "0.05", "ETH", "SC"))))
		}, VerdictArbitrage, TierConfirmed, "builder_payment", "0.0499"},
		{"attempted: the cycle gains less than the gas", func(b *gen.Builder) *Tx { return b.Tx("EOA", "SC", 100000, route(b, "1.00001")) },
			VerdictWarning, TierAttempted, "neg_profit,final_neg", "-0.00009"},
		{"a losing cycle is downgraded by R16: no cycles", func(b *gen.Builder) *Tx { return b.Tx("EOA", "SC", 100000, route(b, "0.9")) },
			VerdictNone, TierNone, "no_cycles,neg_profit,final_neg", "-0.1001"},
		{"costs unknown without a receipt", func(b *gen.Builder) *Tx { return b.Tx("EOA", "SC", 0, route(b, "1.1")) },
			VerdictWarning, TierProbable, "costs_unknown", ""},
		{"leftovers: probable", func(b *gen.Builder) *Tx {
			return b.Tx("EOA", "SC", 100000, route(b, "1.1", b.T("SC", "Stranger", "5", "DAI", "SC")))
		}, VerdictWarning, TierProbable, "leftovers,unexplained", "0.0999"},
		{"final mixed: a USDT cycle pays gas in ETH", func(b *gen.Builder) *Tx {
			root := b.F("EOA", "SC",
				b.T("SC", "P1", "3000", "USDT", "SC"),
				b.F("SC", "P1", b.T("P1", "P2", "1", "WETH", "P1"), b.Static("P1", "WETH")),
				b.F("SC", "P2", b.T("P2", "SC", "3010", "USDT", "P2"), b.Static("P2", "USDT")))
			return b.Tx("EOA", "SC", 100000, root)
		}, VerdictWarning, TierUncertain, "neg_profit,final_mixed", ""},
		{"self-call: R16 is skipped", func(b *gen.Builder) *Tx {
			root := b.F("SC", "SC",
				b.T("SC", "P1", "1", "WETH", "SC"),
				b.F("SC", "P1", b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
				b.F("SC", "P2", b.T("P2", "SC", "1.1", "WETH", "P2"), b.Static("P2", "WETH")))
			return b.Tx("SC", "SC", 100000, root)
		}, VerdictArbitrage, TierConfirmed, "self_call", "0.0999"},
		{"inner cycle: counted when its gain covers the whole cost", func(b *gen.Builder) *Tx {
			root := b.F("EOA", "Router", b.F("Router", "Inner",
				b.T("Inner", "P1", "1", "WETH", "Inner"),
				b.F("Inner", "P1", b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
				b.F("Inner", "P2", b.T("P2", "Inner", "1.1", "WETH", "P2"), b.Static("P2", "WETH"))))
			return b.Tx("EOA", "Router", 100000, root)
		}, VerdictArbitrage, TierConfirmed, "inner_cycle", "0.0999"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := analyze(t, c.build(&gen.Builder{}))
			if a.Verdict != c.verdict || a.Tier != c.tier || reasons(a) != c.why {
				t.Errorf("got %s (%s) %q, want %s (%s) %q", a.Verdict, a.Tier, reasons(a), c.verdict, c.tier, c.why)
			}
			if c.net == "" {
				if a.Costs.Known && c.name == "costs unknown without a receipt" {
					t.Error("costs must be unknown")
				}
			} else {
				net := a.Net.At(a.Recipient, NativeToken)
				want := gen.Units(c.net[len(c.net)-len(trimSign(c.net)):])
				if net.Abs != want || net.Neg != (c.net[0] == '-') {
					t.Errorf("net %s, want %s", net, c.net)
				}
			}
		})
	}
}

func trimSign(s string) string {
	if len(s) > 0 && s[0] == '-' {
		return s[1:]
	}
	return s
}
