package scenario

import (
	"path/filepath"
	"testing"

	"github.com/flowq/flowq/normalform"
)

// TestLogAndValueCallBothShapes decodes the fifth phase's ticket sales
// (contracts/LogPay.sol: a mint logged before, or after, a value call in
// one frame) from the geth and the Parity bundles and checks that both
// shapes give the same transfer order, normal form (exact hash) and
// verdict, and that the order is the canonical one: the payment's native
// leaf, then the mint (the Parity shape cannot place the log against a call
// that emits none; settleLogs puts it after).
func TestLogAndValueCallBothShapes(t *testing.T) {
	tr := loadTruth(t)
	cfg := scenarioConfig(tr)
	seen := 0
	for _, tc := range tr.Scenarios {
		if tc.Name != "log_then_pay" && tc.Name != "pay_then_log" {
			continue
		}
		seen++
		var verdicts []normalform.Verdict
		var hashes []normalform.Hash
		for _, file := range []string{tc.Geth, tc.Parity} {
			tx := decodeOne(t, filepath.Join(examplesDir, file), tc.Tx)
			var events []normalform.Event
			for _, x := range tx.Transfers {
				events = append(events, x.Event)
			}
			// The user's ETH into the seller, the seller's to its
			// collector, then the tickets' mint.
			want := []normalform.Event{normalform.EvNativeCall, normalform.EvNativeCall, normalform.EvERC20Transfer}
			if len(events) != len(want) || events[0] != want[0] || events[1] != want[1] || events[2] != want[2] {
				t.Errorf("%s (%s): transfer events %v, want %v", tc.Name, tx.Shape, events, want)
			}
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				t.Fatalf("%s (%s): %v", tc.Name, tx.Shape, err)
			}
			verdicts = append(verdicts, a.Verdict)
			hashes = append(hashes, a.Hashes().Exact)
		}
		if verdicts[0] != verdicts[1] || verdicts[0] != normalform.VerdictNone {
			t.Errorf("%s: verdicts %v (geth) and %v (parity), want none in both", tc.Name, verdicts[0], verdicts[1])
		}
		if hashes[0] != hashes[1] {
			t.Errorf("%s: normal forms differ: %s (geth) and %s (parity)", tc.Name, hashes[0].Hex(), hashes[1].Hex())
		}
	}
	if seen != 2 {
		t.Fatalf("found %d of the two ticket scenarios in the truth (regenerate with go run ./internal/scenario/cmd/gen)", seen)
	}
}
