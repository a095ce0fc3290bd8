package planner

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/flowq/flowq/index"
)

// runRows runs src with LendRows set as lend, and returns each row as
// emit saw it (cloned during the call), the arrays the rows' fields were
// in, and each row's fields' strings kept without a copy.
func runRows(t *testing.T, ix *index.Index, src string, lend bool) (rows []Row, arrays map[*Field]bool, kept [][]string) {
	t.Helper()
	q, cfg := buildQuery(t, src)
	arrays = map[*Field]bool{}
	x := &Executor{Src: ix, Cfg: cfg, LendRows: lend}
	err := x.Run(context.Background(), q, func(r Row) error {
		rows = append(rows, slices.Clone(r))
		if len(r) > 0 {
			arrays[&r[0]] = true
		}
		var s []string
		for _, f := range r {
			s = append(s, f.Name, f.Value, f.Human)
		}
		kept = append(kept, s)
		return nil
	})
	if err != nil {
		t.Fatalf("%s (lend %v): %v", src, lend, err)
	}
	return rows, arrays, kept
}

// TestLendRows: with Executor.LendRows, find's rows formatted from
// stored records come in one array, reused from row to row, and are the
// rows an executor that does not lend gives, field for field, in order;
// the strings of a lent row stay what they were after later rows reuse
// its array. Rows not formatted from records (groups, counts) are their
// own either way, and so are all rows without LendRows.
func TestLendRows(t *testing.T) {
	ix, b := generatedIndex(t, 20, 100)
	cases := []struct {
		q           string
		fromRecords bool // rows formatted from stored records: lent when asked
	}{
		{"find transactions", true},
		{"find where pools >= 3 and hops >= 4", true},
		{fmt.Sprintf("find where block between %d and %d", b+2, b+9), true},
		{"find where pools >= 2 order by pools desc limit 40", true},
		{"find where verdict = arbitrage", true},
		{"count by family", false},
		{"count by verdict", false},
	}
	for _, c := range cases {
		owned, ownedArrays, ownedKept := runRows(t, ix, c.q, false)
		lent, lentArrays, lentKept := runRows(t, ix, c.q, true)
		if len(owned) < 2 {
			t.Fatalf("%s: %d rows; the test wants several", c.q, len(owned))
		}
		if len(lent) != len(owned) {
			t.Fatalf("%s: %d lent rows, %d owned", c.q, len(lent), len(owned))
		}
		for i := range owned {
			if !slices.Equal(lent[i], owned[i]) {
				t.Fatalf("%s: row %d lent\n%v\nowned\n%v", c.q, i, lent[i], owned[i])
			}
			if !slices.Equal(lentKept[i], ownedKept[i]) {
				t.Fatalf("%s: row %d's strings, kept past the call, changed: %v, owned %v", c.q, i, lentKept[i], ownedKept[i])
			}
		}
		if len(ownedArrays) != len(owned) {
			t.Errorf("%s: %d owned rows in %d arrays: rows share storage without LendRows", c.q, len(owned), len(ownedArrays))
		}
		if want := map[bool]int{true: 1, false: len(lent)}[c.fromRecords]; len(lentArrays) != want {
			t.Errorf("%s: %d lent rows in %d arrays, want %d", c.q, len(lent), len(lentArrays), want)
		}
	}
}
