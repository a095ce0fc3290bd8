package witness

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
)

// TestSearcherReset: one Searcher Reset to list after list of random
// transfers (short and long ones in turn, so that its tables shrink and
// grow; some with two transfers at one Pos), each asked at every address
// and token under budgets from 0 to unbounded, answers as a fresh FindIn
// does: nothing of a list's tables leaks into the next one's answers.
func TestSearcherReset(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	ats := []*common.Address{nil}
	for i := range randAddrs {
		ats = append(ats, &randAddrs[i])
	}
	toks := []*token{nil}
	for i := range randTokens {
		toks = append(toks, &randTokens[i])
	}
	budgets := []int{-1, 0, 1, 3, 8, 21, 1 << 20}
	var s Searcher[token]
	queries, found := 0, 0
	for i := 0; i < 600; i++ {
		n := 1 + r.Intn(4)
		if i%3 == 0 {
			n = 8 + r.Intn(16)
		}
		ts := randomTransfers(r, n, func() uint256.Int { return *uint256.NewInt(uint64(r.Intn(6))) })
		if i%25 == 0 && len(ts) > 1 {
			ts[1].Pos = ts[0].Pos
		}
		own := append([]Transfer[token](nil), ts...)
		s.Reset(own, eq)
		for q := 0; q < 20; q++ {
			at, tok, b := ats[r.Intn(len(ats))], toks[r.Intn(len(toks))], budgets[r.Intn(len(budgets))]
			w1, f1, e1 := s.FindIn(at, tok, b)
			w2, f2, e2 := FindIn(ts, eq, at, tok, b)
			if f1 != f2 || e1 != e2 || !reflect.DeepEqual(w1, w2) {
				t.Fatalf("list %d, %s, tok %v, budget %d: reset %v/%v/%v, fresh %v/%v/%v", i, dump(ts, at), tok, b, w1, f1, e1, w2, f2, e2)
			}
			queries++
			if f1 {
				found++
			}
		}
	}
	if found < queries/20 {
		t.Fatalf("%d of %d queries found a witness: too few to compare", found, queries)
	}
	t.Logf("%d queries, %d with a witness", queries, found)
}
