package scenario

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
)

// sameTx compares two decodings of one transaction: the transfers (every
// field but LogIndex, which only the Parity shape's receipts number
// block-wide), the metadata flowq reads, and T0.
func sameTx(a, b *normalform.Tx) error {
	if len(a.Transfers) != len(b.Transfers) {
		return fmt.Errorf("%d transfers against %d", len(a.Transfers), len(b.Transfers))
	}
	for i := range a.Transfers {
		x, y := a.Transfers[i], b.Transfers[i]
		x.LogIndex, y.LogIndex = 0, 0
		if x != y {
			return fmt.Errorf("transfer %d differs:\n  %+v\n  %+v", i, a.Transfers[i], b.Transfers[i])
		}
	}
	ma, mb := show.MetaToJSON(&a.Meta), show.MetaToJSON(&b.Meta)
	ja, _ := json.Marshal(ma)
	jb, _ := json.Marshal(mb)
	if string(ja) != string(jb) {
		return fmt.Errorf("metadata differs:\n  %s\n  %s", ja, jb)
	}
	ta, _ := json.Marshal(show.TreeToJSON(a.Root))
	tb, _ := json.Marshal(show.TreeToJSON(b.Root))
	if string(ta) != string(tb) {
		return fmt.Errorf("T0 differs:\n  %s\n  %s", ta, tb)
	}
	return nil
}

// TestGethAndParityShapesAgree is test (b): for every scenario, the
// callTracer-with-logs bundle and the flatCallTracer-with-receipts bundle
// (both from the same node) decode to the same transfers and the same T0.
func TestGethAndParityShapesAgree(t *testing.T) {
	tr := loadTruth(t)
	for _, tc := range tr.Scenarios {
		g := decodeOne(t, filepath.Join(examplesDir, tc.Geth), tc.Tx)
		p := decodeOne(t, filepath.Join(examplesDir, tc.Parity), tc.Tx)
		if g.Shape != "geth" || p.Shape != "parity" {
			t.Errorf("%s: shapes %s and %s", tc.Name, g.Shape, p.Shape)
		}
		if err := sameTx(g, p); err != nil {
			t.Errorf("%s: geth and parity shapes disagree: %v", tc.Name, err)
		}
		if g.Stats.Frames != p.Stats.Frames {
			t.Errorf("%s: %d frames against %d", tc.Name, g.Stats.Frames, p.Stats.Frames)
		}
	}
}
