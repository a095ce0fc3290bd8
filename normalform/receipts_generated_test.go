package normalform_test

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	. "github.com/flowq/flowq/normalform"
)

// receiptsView is what receipts alone show of a traced transaction: one
// frame (the transaction's, from its sender to its recipient), under it
// every token transfer in trace order with σ unknown (the zero address),
// and of the native transfers only those a receipt shows: the
// transaction's own value (the top frame's, sender to recipient) and the
// wrapped native's legs (to or from a wrapped-native contract, which its
// Deposit and Withdrawal logs give, with their σ). Native value moved by
// any other internal call is dropped. It returns the view and how many
// native transfers it dropped.
func receiptsView(tx *Tx, cfg *Config) (*Tx, int) {
	out := &Tx{Meta: tx.Meta, Shape: ShapeReceipts}
	root := &Node{Frame: &Frame{Type: Call, From: tx.Meta.From, To: tx.Meta.To, Sender: tx.Meta.From}}
	dropped := 0
	for _, t := range tx.Transfers {
		if t.Token.Kind == Native {
			own := t.Frame == 0 && t.From == tx.Meta.From && t.To == tx.Meta.To
			if !own && !cfg.IsWrappedNative(t.From) && !cfg.IsWrappedNative(t.To) {
				dropped++
				continue
			}
		} else {
			t.Sender = Address{}
		}
		t.Frame = 0
		out.Transfers = append(out.Transfers, t)
	}
	for i := range out.Transfers {
		root.Children = append(root.Children, &Node{Leaf: &out.Transfers[i]})
	}
	out.Root = Trim(root)
	return out, dropped
}

// TestReceiptsOnlyGenerated puts receipts-only verdicts beside traced
// ones on the 40,000 generated trees of TestDetectionProperties (same
// seed): each tree is analysed, then its receiptsView. The test fails
// when a receipts-only detection lacks its witness or the reason
// receipts_only, and when the table of both verdicts differs from
// testdata/receipts_generated.txt (-update rewrites it; at
// FLOWQ_PROPERTY_N other than 40,000 the table is only logged).
// Receipts-only arbitrages where the trace says none are counted by what
// the view hid: native legs of internal calls, or only σ and the frames.
func TestReceiptsOnlyGenerated(t *testing.T) {
	n := propertyN(t)
	cfg := DefaultConfig()
	r := rand.New(rand.NewSource(propertySeed))
	type pair struct{ traced, rcpt string }
	pairs := map[pair]int{}
	falseArb := map[string]int{}
	missed := map[string]int{}
	falseKind, missedKind := map[string]int{}, map[string]int{}
	agree, agreeVerdict := 0, 0
	vt := func(a *Analysis) string {
		s := a.Verdict.String()
		if a.Tier != TierNone {
			s += " (" + a.Tier.String() + ")"
		}
		return s
	}
	shown := 0
	for i := 0; i < n; i++ {
		kind, tx := propertyTree(r)
		ta, err := Analyze(tx, cfg)
		if err != nil {
			t.Fatalf("tree %d (%s): %v", i, kind, err)
		}
		view, dropped := receiptsView(tx, cfg)
		ra, err := Analyze(view, cfg)
		if err != nil {
			t.Fatalf("tree %d (%s), receipts view: %v", i, kind, err)
		}
		has := false
		for _, x := range ra.Reasons {
			has = has || x == ReasonReceiptsOnly
		}
		if has != (len(ra.Detections) > 0) && shown < 5 {
			shown++
			t.Errorf("tree %d (%s): reasons %v with %d detections: receipts_only goes exactly with a detection", i, kind, ra.Reasons, len(ra.Detections))
		}
		for _, d := range ra.Detections {
			if (d.Witness == nil || len(d.Witness.Pieces) == 0) && shown < 5 {
				shown++
				t.Errorf("tree %d (%s): receipts-only detection without a witness", i, kind)
			}
		}
		pairs[pair{vt(ta), vt(ra)}]++
		if ta.Verdict == ra.Verdict {
			agreeVerdict++
			if vt(ta) == vt(ra) {
				agree++
			}
		}
		why := "σ and frames only"
		if dropped > 0 {
			why = "native legs of internal calls"
		}
		switch {
		case ra.Verdict == VerdictArbitrage && ta.Verdict == VerdictNone:
			falseArb[why]++
			falseKind[kind+" ("+strings.Fields(why)[0]+")"]++
		case ta.Verdict == VerdictArbitrage && ra.Verdict != VerdictArbitrage:
			missed[why]++
			missedKind[kind+" ("+strings.Fields(why)[0]+")"]++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "generated trees: %d (seed %d)\n", n, propertySeed)
	fmt.Fprintf(&b, "agree in verdict: %d; in verdict and tier: %d\n", agreeVerdict, agree)
	fmt.Fprintf(&b, "%-26s %-26s %s\n", "traced", "receipts only", "trees")
	var ps []pair
	for p := range pairs {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].traced != ps[j].traced {
			return ps[i].traced < ps[j].traced
		}
		return ps[i].rcpt < ps[j].rcpt
	})
	for _, p := range ps {
		fmt.Fprintf(&b, "%-26s %-26s %d\n", p.traced, p.rcpt, pairs[p])
	}
	for _, k := range []string{"native legs of internal calls", "σ and frames only"} {
		fmt.Fprintf(&b, "receipts-only arbitrage, traced none, hidden %s: %d (each with receipts_only)\n", k, falseArb[k])
		fmt.Fprintf(&b, "traced arbitrage missed from receipts, hidden %s: %d\n", k, missed[k])
	}
	byKind := func(m map[string]int) string {
		var ks []string
		for k, v := range m {
			ks = append(ks, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(ks)
		return strings.Join(ks, ", ")
	}
	fmt.Fprintf(&b, "receipts-only arbitrage, traced none, by kind of tree (hidden native legs or σ only): %s\n", byKind(falseKind))
	fmt.Fprintf(&b, "traced arbitrage missed from receipts, by kind of tree (hidden native legs or σ only): %s\n", byKind(missedKind))
	got := b.String()
	t.Logf("\n%s", got)
	if n != defaultPropertyN {
		return
	}
	golden := filepath.Join("testdata", "receipts_generated.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestReceiptsOnlyGenerated -update)", err)
	}
	if string(want) != got {
		t.Errorf("the table differs from %s (-update rewrites it):\nwant\n%s\ngot\n%s", golden, want, got)
	}
}
