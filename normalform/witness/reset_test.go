package witness

import (
	"math/big"
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

// TestVerifyAmountsNoAllocation: Verify sums δ[v, τ] with math/big, each
// amount set into one reused big.Int: a cycle through v forty times does
// not allocate a big.Int per transfer (issue 22, session 7: ToBig made
// two allocations an amount, about 6 a synthetic transaction).
func TestVerifyAmountsNoAllocation(t *testing.T) {
	v := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	cycle := func(n int) ([]Transfer[token], *Witness[token]) {
		var ts []Transfer[token]
		var piece []int32
		for i := 0; i < n; i++ {
			x := common.BigToAddress(new(big.Int).SetInt64(int64(1000 + i)))
			out := Transfer[token]{From: v, To: x, Amount: *uint256.NewInt(10), Token: weth, Pos: int32(2 * i)}
			back := Transfer[token]{From: x, To: v, Amount: *uint256.NewInt(11), Token: weth, Pos: int32(2*i + 1)}
			ts = append(ts, out, back)
			piece = append(piece, out.Pos, back.Pos)
		}
		w := &Witness[token]{V: v, Token: weth, Pieces: [][]int32{piece}, Gain: Signed{Abs: *uint256.NewInt(uint64(n))}}
		if err := Verify(ts, eq, w); err != nil {
			t.Fatalf("a cycle of %d round trips: %v", n, err)
		}
		return ts, w
	}
	allocs := func(n int) float64 {
		ts, w := cycle(n)
		return testing.AllocsPerRun(20, func() { _ = Verify(ts, eq, w) })
	}
	small, large := allocs(2), allocs(40)
	// The lists and maps of the positions grow with the cycle (a few
	// allocations); a big.Int an amount would add 2 for each of 76 more
	// transfers.
	if large-small > 30 {
		t.Fatalf("Verify: %.0f allocations for 4 transfers through v, %.0f for 80: %.0f more, want at most 30", small, large, large-small)
	}
	t.Logf("Verify: %.0f allocations for 4 transfers, %.0f for 80", small, large)
}
