package planner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/layout"
)

// ownedRows is the index without FilterRowsLent: its scans give each row
// its own record, as before the lent scans.
type ownedRows struct{ Source }

func (s ownedRows) FilterRows(ctx context.Context, blocks layout.BlockRange, addrs bool, match func(*layout.Record) (bool, error), fn func(*layout.Record) error) error {
	return s.Source.(rowSource).FilterRows(ctx, blocks, addrs, match, fn)
}

func (s ownedRows) FilterRowsByFront(ctx context.Context, blocks layout.BlockRange, match func(*layout.Record) (bool, error), fn func(*layout.Record) error) error {
	return s.Source.(frontRowSource).FilterRowsByFront(ctx, blocks, match, fn)
}

// TestLentRowsSame: find's rows from scans that lend their records
// (FilterRowsLent: storage reused from row to row and chunk to chunk) are
// the rows of scans that give each row its own record, every field's
// machine and human text, in the same order, on a generated index of
// 3,000 synthetic transactions (gross and net in several tokens, ETH and
// WETH folded, reasons) and on the corpus' index; a sort over a scan
// keeps its records, so it does not borrow them.
func TestLentRowsSame(t *testing.T) {
	ix, b := generatedIndex(t, 30, 100)
	queries := []struct {
		q    string
		lent bool // a scan whose rows are formatted at once
	}{
		{"find transactions", true},
		{"find where pools >= 3 and hops >= 4", true},
		{"find where pools >= 1 limit 500", true},
		{"find where cycles >= 1 and leftovers = 0", true},
		{fmt.Sprintf("find where block between %d and %d", b+3, b+17), true},
		{fmt.Sprintf("find where block >= %d and hops >= 2", b+20), true},
		{"find where has reason no_cycles", true},
		{"find where pools >= 2 order by pools desc limit 40", false},
		{"find where verdict = arbitrage", false}, // its keys
	}
	for _, idx := range []*index.Index{ix, testIndex} {
		for _, c := range queries {
			src := &rowCounting{Index: idx}
			got, want := fullRows(t, src, c.q), fullRows(t, ownedRows{idx}, c.q)
			if strings.HasPrefix(got, "error") || (idx == ix && strings.Count(got, "\n") < 2) {
				t.Fatalf("%s: %s", c.q, got)
			}
			if got != want {
				t.Errorf("%s: lent rows\n%s\n--- owned rows\n%s", c.q, got, want)
			}
			if c.lent != (src.lent != 0) {
				t.Errorf("%s: %d lent scans", c.q, src.lent)
			}
		}
	}
}
