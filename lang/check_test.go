package lang

import (
	"strings"
	"testing"

	"github.com/flowq/flowq/normalform"
)

// TestCheckTypedValues: the check pass gives each name its typed value
// from the vocabulary, so that the planner reads no name.
func TestCheckTypedValues(t *testing.T) {
	const h = "0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa"
	sts, err := Parse("q", "count by tier where tier = attempted and reason leftovers and path != rotation and mode = receipts; same "+h+" "+h+" at family; match "+h+"; show "+h+" as terms, steps; show "+h+"; count sandwiches by sender")
	if err != nil {
		t.Fatal(err)
	}
	c := sts[0].(*Count)
	if c.Group != GroupTier || c.What != TargetTransactions || KindOf(c) != StmtCount {
		t.Errorf("count: group %v what %v kind %v", c.Group, c.What, KindOf(c))
	}
	var is []*Is
	var reason *HasReason
	Walk(c.Where, func(n Node) bool {
		switch x := n.(type) {
		case *Is:
			is = append(is, x)
		case *HasReason:
			reason = x
		}
		return true
	})
	if len(is) != 3 || is[0].Tier != normalform.TierAttempted || is[0].Verdict != normalform.VerdictWarning ||
		is[1].Path != normalform.PathRotation || !is[1].Neg || is[2].Mode != normalform.ModeReceipts {
		t.Errorf("is: %+v", is)
	}
	if reason == nil || reason.Want != normalform.ReasonLeftovers {
		t.Errorf("reason: %+v", reason)
	}
	if s := sts[1].(*Same); s.At != normalform.Family {
		t.Errorf("same at %v", s.At)
	}
	if m := sts[2].(*Match); m.At != normalform.Shape {
		t.Errorf("match at %v (want shape, the default)", m.At)
	}
	if s := sts[3].(*Show); len(s.As) != 2 || s.As[0] != ViewTerms || s.As[1] != ViewSteps {
		t.Errorf("show as %v", s.As)
	}
	if s := sts[4].(*Show); len(s.As) != 1 || s.As[0] != ViewAll {
		t.Errorf("show as %v (want all, the default)", s.As)
	}
	if c := sts[5].(*Count); c.Group != GroupSender || !c.What.Findings() {
		t.Errorf("count sandwiches by %v", c.Group)
	}
	if sts[0].Source() == nil || sts[0].Source() != sts[5].Source() || sts[0].Source().File != "q" {
		t.Errorf("statements of one script share its Source")
	}
}

// TestCheckErrors: an unknown reason is reported when the script is parsed
// (it was the planner's, found only when its statement ran), with the
// vocabulary's words; a grouping of findings offers findings' words only.
func TestCheckErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"find limit 1; find where reason profit", `q:1:33: unknown reason "profit": want no_cycles, leftovers, final_neg, final_mixed, costs_unknown, inner_cycle, balance_mixed, neg_profit, promoted, self_call, builder_payment, payout, unexplained, unwitnessed, receipts_only, v4_netted`},
		{"count sandwiches by tier", `q:1:21: unknown grouping of sandwiches "tier": want bot, sender, block`},
		{"find backruns where verdict = arbitrage", `q:1:21: verdict does not apply to backruns: filter them by profit, pools, block, bot, sender or touches`},
	} {
		_, err := Parse("q", c.src)
		if err == nil || !strings.HasPrefix(err.Error(), c.want+"\n") {
			t.Errorf("%q: got %v\nwant %s", c.src, err, c.want)
		}
	}
}
