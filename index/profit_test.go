package index

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// TestNetProfitThroughGross: a net component equal to a gross one of the
// same record (a token neither native nor wrapped native) has no net key
// of its own (schema 13), and a net lookup still finds exactly the net
// components in its range, each once, in amount then position order:
// over every token of the corpus's and the scenarios' net balances,
// unbounded and in random ranges, against the records themselves.
func TestNetProfitThroughGross(t *testing.T) {
	as := append(analyseCorpus(t), analyseDir(t, gethScenarios)...)
	ix := putAll(t, as)
	ctx := context.Background()
	var recs []*Record
	if err := ix.Records(ctx, AllBlocks, func(r *Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	type hit struct {
		a normalform.Signed
		l Loc
	}
	less := func(x, y hit) int {
		if c := x.a.Cmp(y.a); c != 0 {
			return c
		}
		if x.l.Less(y.l) {
			return -1
		}
		if y.l.Less(x.l) {
			return 1
		}
		return 0
	}
	tokens := map[normalform.Token]bool{}
	nets, shared := 0, 0
	for _, r := range recs {
		if !r.CostsKnown {
			continue
		}
		for _, a := range r.Net {
			tokens[layout.NormalToken(a.Token)] = true
			nets++
			if r.GrossHas(a) {
				shared++
			}
		}
	}
	st, err := ix.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if shared == 0 {
		t.Fatal("no net component equals a gross one: the test shows nothing")
	}
	// Every gross component has its key; a net one only when no gross
	// one stands for it.
	gross := 0
	for _, r := range recs {
		gross += len(r.Gross)
	}
	if got, want := st[KindProfit].Positions, gross+nets-shared; got != want {
		t.Errorf("%d profit positions, want %d (%d gross, %d net of which %d equal a gross one)", got, want, gross, nets, shared)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for tok := range tokens {
		var all []hit
		for _, r := range recs {
			if !r.CostsKnown {
				continue
			}
			for _, a := range r.Net {
				if layout.NormalToken(a.Token) == tok {
					all = append(all, hit{a.Amount, r.Loc})
				}
			}
		}
		slices.SortFunc(all, less)
		check := func(lo, hi *normalform.Signed) {
			t.Helper()
			var want, got []hit
			for _, h := range all {
				if (lo == nil || h.a.Cmp(*lo) >= 0) && (hi == nil || h.a.Cmp(*hi) <= 0) {
					want = append(want, h)
				}
			}
			if err := ix.ByProfit(ctx, Net, tok, lo, hi, func(a normalform.Signed, r Ref) error {
				got = append(got, hit{a, r.Loc})
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("net %s in [%v, %v]: %d components %v, want %d %v", tok.Addr.Hex(), lo, hi, len(got), got, len(want), want)
			}
		}
		check(nil, nil)
		for range 5 {
			x, y := all[rng.IntN(len(all))].a, all[rng.IntN(len(all))].a
			if x.Cmp(y) > 0 {
				x, y = y, x
			}
			check(&x, &y)
			check(&x, nil)
			check(nil, &y)
		}
	}
}

// TestProfitBucketShared: amounts that share a profit key's bucket
// (schema 13: the key holds 3 bytes of the amount) are found exactly: a
// range whose ends fall inside a bucket gives only the amounts within
// it, in amount order although the bucket's keys come in position order
// (here the reverse), and a bucket of more records than a lookup keeps
// while sorting (profitKept) gives them all, in order, once each.
func TestProfitBucketShared(t *testing.T) {
	var base *Record
	for _, a := range analyseCorpus(t) {
		r, err := NewRecord(a, time.Microsecond)
		if err != nil {
			t.Fatal(err)
		}
		if r.Loc.Known() && len(r.Gross) == 1 && r.Gross[0].Amount.Sign() > 0 {
			base = r
			break
		}
	}
	if base == nil {
		t.Fatal("no corpus record with one gain")
	}
	tok := base.Gross[0].Token
	ix := openPaged(t)
	const n = profitKept + 300
	one := uint256.NewInt(1e18) // 2^59.8: a bucket holds 2^45 wei of it
	var all []normalform.Signed
	var recs []*Record
	for i := range n {
		r := *base
		r.Hash = normalform.Hash{0xb0, byte(i >> 8), byte(i)}
		r.Loc = Loc{Block: 5000 + uint64(i/100), Index: uint32(i % 100)}
		var amt uint256.Int
		amt.AddUint64(one, uint64(7*(n-i))) // falling with the position
		r.Gross = []Amount{{Token: tok, Amount: normalform.Signed{Abs: amt}}}
		r.CostsKnown, r.Net = false, nil
		all = append(all, r.Gross[0].Amount)
		recs = append(recs, &r)
	}
	// and a neighbour on each side, in other buckets
	for i, d := range []int64{-1 << 46, 1 << 46} {
		r := *base
		r.Hash = normalform.Hash{0xb1, byte(i)}
		r.Loc = Loc{Block: 4000 + uint64(i), Index: 1}
		var amt uint256.Int
		if d < 0 {
			amt.SubUint64(one, uint64(-d))
		} else {
			amt.AddUint64(one, uint64(d))
		}
		r.Gross = []Amount{{Token: tok, Amount: normalform.Signed{Abs: amt}}}
		r.CostsKnown, r.Net = false, nil
		all = append(all, r.Gross[0].Amount)
		recs = append(recs, &r)
	}
	for _, r := range recs {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if b0, b1 := ProfitBucket(all[0]), ProfitBucket(all[n-1]); b0 != b1 {
		t.Fatal("the test's amounts do not share a bucket")
	}
	slices.SortFunc(all, func(x, y normalform.Signed) int { return x.Cmp(y) })
	ctx := context.Background()
	check := func(lo, hi *normalform.Signed) {
		t.Helper()
		var want, got []normalform.Signed
		for _, a := range all {
			if (lo == nil || a.Cmp(*lo) >= 0) && (hi == nil || a.Cmp(*hi) <= 0) {
				want = append(want, a)
			}
		}
		if err := ix.ByProfit(ctx, Gross, tok, lo, hi, func(a normalform.Signed, _ Ref) error { got = append(got, a); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("[%v, %v]: %d amounts, want %d (first %v, want %v)", lo, hi, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
		}
		rows := 0
		if err := ix.Fetch(ctx, Lookup{By: KindProfit, Side: Gross, Token: tok, Lo: lo, Hi: hi, Rows: true}, func(*Record) error { rows++; return nil }); err != nil {
			t.Fatal(err)
		}
		if rows != len(want) {
			t.Errorf("[%v, %v]: Fetch gave %d rows, want %d", lo, hi, rows, len(want))
		}
	}
	check(nil, nil)
	check(&all[1], &all[len(all)-2]) // the bucket whole
	check(&all[10], &all[20])        // inside the bucket
	check(&all[300], nil)            // from inside it
	check(nil, &all[profitKept+50])  // to inside it, past what a lookup keeps
	check(&all[len(all)-1], &all[len(all)-1])
}
