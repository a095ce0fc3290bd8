package normalform

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
)

// multiset renders a list of transfers as a sorted multiset of positions.
func multiset(ts []*Transfer) string {
	ps := make([]int, len(ts))
	for i, t := range ts {
		ps[i] = int(t.Pos)
	}
	sort.Ints(ps)
	return fmt.Sprint(ps)
}

// CheckProperties checks, on one analysis, the properties the paper proves
// of the kernel: preservation (the normal form carries exactly T0's
// transfers), the 3n-2 pass bound, and determinism (a second analysis is
// identical, step by step). It is used on random trees here and on every
// corpus transaction in package trace.
func CheckProperties(tx *Tx, cfg *Config) error {
	a, err := Analyze(tx, cfg)
	if err != nil {
		return err
	}
	if tx.Root == nil {
		return nil
	}
	t0 := tx.Root.Leaves(nil)
	nf := a.NF.Leaves(nil)
	if multiset(t0) != multiset(nf) {
		return fmt.Errorf("preservation: T0 carries %s, the normal form %s", multiset(t0), multiset(nf))
	}
	if n := len(t0); n > 0 && a.Passes > 3*n-2 {
		return fmt.Errorf("pass bound: %d passes for %d transfers (bound %d)", a.Passes, n, 3*n-2)
	}
	b, err := Analyze(tx, cfg)
	if err != nil {
		return err
	}
	// The encoding carries the whole analysis (normal form, verdict,
	// balances, costs, the step log); the notes are compared as shown.
	if !bytes.Equal(EncodeNF(a), EncodeNF(b)) || !slices.Equal(cfg.StepTexts(a), cfg.StepTexts(b)) {
		return fmt.Errorf("determinism: two analyses differ")
	}
	return nil
}
