package witness

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
)

// TestSearcherReuse: one Searcher asked many times, at every address and
// token and under budgets from 0 to unbounded in a random order, answers
// each query as a fresh FindIn does (the tables are shared, the budget,
// the step count and the inconsistency flag are each query's own).
// Some lists have two transfers at one Pos (malformed: no answer).
func TestSearcherReuse(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	ats := []*common.Address{nil}
	for i := range randAddrs {
		ats = append(ats, &randAddrs[i])
	}
	toks := []*token{nil}
	for i := range randTokens {
		toks = append(toks, &randTokens[i])
	}
	budgets := []int{-1, 0, 1, 2, 3, 5, 8, 13, 21, 1 << 20}
	queries, found := 0, 0
	for i := 0; i < 400; i++ {
		ts := randomTransfers(r, 1+r.Intn(9), func() uint256.Int { return *uint256.NewInt(uint64(r.Intn(6))) })
		if i%20 == 0 && len(ts) > 1 {
			ts[1].Pos = ts[0].Pos
		}
		s := NewSearcher(ts, eq)
		for q := 0; q < 40; q++ {
			at, tok, b := ats[r.Intn(len(ats))], toks[r.Intn(len(toks))], budgets[r.Intn(len(budgets))]
			w1, f1, e1 := s.FindIn(at, tok, b)
			w2, f2, e2 := FindIn(ts, eq, at, tok, b)
			if f1 != f2 || e1 != e2 || !reflect.DeepEqual(w1, w2) {
				t.Fatalf("%s, tok %v, budget %d: reused %v/%v/%v, fresh %v/%v/%v", dump(ts, at), tok, b, w1, f1, e1, w2, f2, e2)
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
