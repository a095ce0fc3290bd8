package normalform_test

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/flowq/flowq/index/fetch/screen"
	. "github.com/flowq/flowq/normalform"
)

// TestScreenGenerated runs issue 19's screening rule (index/fetch/screen,
// what fetch.Suspect applies to a receipts-only record) on the receipts
// view of the 40,000 generated trees of TestDetectionProperties (same
// seed, receiptsView as in TestReceiptsOnlyGenerated). It fails when a
// tree the trace calls arbitrage is not a suspect from its receipts view
// while the view hid native legs of internal calls (the class the rule is
// made for: inClass); it logs the cost: how many trees the trace calls none or
// warning are suspects, by reason.
func TestScreenGenerated(t *testing.T) {
	n := propertyN(t)
	cfg := DefaultConfig()
	r := rand.New(rand.NewSource(propertySeed))
	var arbClass int
	var arb, arbHidden, missedHidden, missedOutside, missedOther, none, noneSus int
	byReason := map[screen.Reason]int{}
	missedKind := map[string]int{}
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
		why := screen.Why(ra, cfg)
		if ta.Verdict != VerdictArbitrage {
			none++
			if why != "" {
				noneSus++
				byReason[why]++
			}
			continue
		}
		arb++
		if dropped > 0 {
			arbHidden++
			if inClass(ta, cfg) {
				arbClass++
			}
		}
		if why != "" {
			continue
		}
		switch {
		case dropped > 0 && !inClass(ta, cfg):
			missedOutside++
			missedKind[kind+" (outside)"]++
		case dropped > 0:
			missedHidden++
			missedKind[kind]++
			if shown < 5 {
				shown++
				t.Errorf("tree %d (%s): traced arbitrage, its receipts view (%d native legs hidden) is not a suspect", i, kind, dropped)
			}
		default:
			missedOther++
		}
	}
	var rs []string
	for _, x := range screen.Reasons {
		rs = append(rs, fmt.Sprintf("%s %d", x, byReason[x]))
	}
	var ks []string
	for k, v := range missedKind {
		ks = append(ks, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(ks)
	t.Logf("generated trees: %d; traced arbitrage %d (%d with native legs hidden from receipts, %d of them in the class): not suspects %d in the class, %d with hidden native legs outside it, %v, %d without hidden native legs (σ and frames); traced none or warning %d: suspects %d (%.1f%%; %s)",
		n, arb, arbHidden, arbClass, missedHidden, missedOutside, ks, missedOther, none, noneSus, 100*float64(noneSus)/float64(max(none, 1)), strings.Join(rs, ", "))
}

// inClass reports whether a traced arbitrage is of the class the
// screening rule is complete for (index/fetch/screen): every detection's
// origin is the sender or the recipient, and the gross loses no token
// other than the native asset and the wrapped native.
func inClass(a *Analysis, cfg *Config) bool {
	for _, d := range a.Detections {
		if !a.Principal(d.Origin) {
			return false
		}
	}
	for _, e := range a.Gross {
		if e.Token.Kind == Native || (e.Token.Kind == Fungible && cfg.IsWrappedNative(e.Token.Addr)) {
			continue
		}
		if e.Amount.Sign() < 0 {
			return false
		}
	}
	return true
}
