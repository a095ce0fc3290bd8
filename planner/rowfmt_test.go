package planner

import (
	"reflect"
	"testing"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// TestRowFormatterAmounts: rows built by one rowFormatter (texts in one
// buffer, tokens looked up once) equal slowRow's, field for field, for
// amounts at the edges of their decimals (zero, one base unit, fractions
// with trailing zeros, 2^64-1 and 2^64, 2^200, the largest), signs, known
// tokens of 18 and 6 decimals, an unknown token, the native asset, NFTs,
// ETH with WETH (folded; folded to nothing; overflowing when folded), unknown costs, no or several reasons, an
// unknown block, rows longer than a block of texts (first or later); and a
// formatter's later rows do not alter earlier ones.
func TestRowFormatterAmounts(t *testing.T) {
	cfg := normalform.DefaultConfig()
	mustAddr := func(s string) normalform.Address {
		as, err := normalform.ParseAddressList(s)
		if err != nil || len(as) != 1 {
			t.Fatal(s, err)
		}
		return as[0]
	}
	weth := normalform.FungibleToken(mustAddr("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"))
	usdc := normalform.FungibleToken(mustAddr("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"))
	odd := normalform.FungibleToken(normalform.Address{0x12, 0x34, 19: 0xcd})
	nft := normalform.Token{Kind: normalform.NFT721, Addr: normalform.Address{7}, ID: *uint256.NewInt(42)}
	m1155 := normalform.Token{Kind: normalform.Multi1155, Addr: normalform.Address{8}, ID: *uint256.NewInt(3)}
	m6909 := normalform.Token{Kind: normalform.Multi6909, Addr: normalform.Address{9}, ID: *uint256.NewInt(0)}
	var maxU, big, two64, two64m1 uint256.Int
	maxU.SetAllOne()
	big.Lsh(uint256.NewInt(1), 200)
	two64.Lsh(uint256.NewInt(1), 64)
	two64m1.SetUint64(^uint64(0))
	vals := []*uint256.Int{uint256.NewInt(0), uint256.NewInt(1), uint256.NewInt(10), uint256.NewInt(1_500_000), uint256.NewInt(1e18),
		uint256.NewInt(1_230_000_000_000_000_000), uint256.NewInt(999_999), &two64m1, &two64, &big, &maxU}
	toks := []normalform.Token{normalform.NativeToken, weth, usdc, odd, nft, m1155, m6909}
	var recs []*layout.Record
	for i, v := range vals {
		for j, tok := range toks {
			r := &layout.Record{Hash: normalform.Hash{byte(i), byte(j)}, Loc: layout.Loc{Block: uint64(i * j), Index: 1},
				Recipient: normalform.Address{byte(i), 19: byte(j)}, CostsKnown: j%3 != 0, Counts: normalform.Counts{Pools: i, Hops: 100 + j}}
			r.Gross = []layout.Amount{{Token: tok, Amount: normalform.Signed{Abs: *v, Neg: i%2 == 1}}}
			if r.CostsKnown {
				other := toks[(j+1)%len(toks)]
				r.Net = []layout.Amount{{Token: tok, Amount: normalform.Signed{Abs: *v}}, {Token: other, Amount: normalform.Signed{Abs: *vals[(i+3)%len(vals)], Neg: true}}}
			}
			switch j % 3 {
			case 1:
				r.Reasons = []normalform.Reason{normalform.ReasonLeftovers}
			case 2:
				r.Reasons = []normalform.Reason{normalform.ReasonLeftovers, normalform.ReasonNoCycles, "something new"}
			}
			recs = append(recs, r)
		}
	}
	// ETH and WETH together fold; an empty balance; an unknown block.
	recs = append(recs,
		&layout.Record{Loc: layout.Loc{Block: layout.UnknownBlock, Index: layout.UnknownIndex}, CostsKnown: true,
			Gross: []layout.Amount{{Token: normalform.NativeToken, Amount: normalform.Signed{Abs: *uint256.NewInt(5e17)}}, {Token: weth, Amount: normalform.Signed{Abs: *uint256.NewInt(25e16), Neg: true}}},
			Net:   []layout.Amount{{Token: usdc, Amount: normalform.Signed{Abs: *uint256.NewInt(1)}}, {Token: weth, Amount: normalform.Signed{Abs: *uint256.NewInt(1)}}, {Token: normalform.NativeToken, Amount: normalform.Signed{Abs: *uint256.NewInt(2)}}}},
		&layout.Record{Loc: layout.Loc{Block: 1, Index: 2}, CostsKnown: true},
		// ETH and WETH that cancel (folded to nothing: "0 (…)"), and that
		// overflow when folded (FormatGross writes the entries alone).
		&layout.Record{Loc: layout.Loc{Block: 3, Index: 0},
			Gross: []layout.Amount{{Token: normalform.NativeToken, Amount: normalform.Signed{Abs: *uint256.NewInt(7)}}, {Token: weth, Amount: normalform.Signed{Abs: *uint256.NewInt(7), Neg: true}}}},
		&layout.Record{Loc: layout.Loc{Block: 4, Index: 0},
			Gross: []layout.Amount{{Token: normalform.NativeToken, Amount: normalform.Signed{Abs: maxU}}, {Token: weth, Amount: normalform.Signed{Abs: maxU}}, {Token: usdc, Amount: normalform.Signed{Abs: *uint256.NewInt(1)}}}})
	// Rows longer than a block's room (textRoom) and than a block
	// (textBlock): written where append moves them, first or later.
	long := func(n int) *layout.Record {
		r := &layout.Record{Loc: layout.Loc{Block: 9, Index: uint32(n)}, CostsKnown: true}
		for k := range n {
			tok := normalform.FungibleToken(normalform.Address{0xee, byte(k >> 8), byte(k)})
			r.Gross = append(r.Gross, layout.Amount{Token: tok, Amount: normalform.Signed{Abs: maxU, Neg: k%2 == 0}})
		}
		r.Net = r.Gross[:n/2]
		return r
	}
	recs = append(recs, long(8), long(300), recs[0])
	for _, order := range [][]*layout.Record{recs, append([]*layout.Record{long(300), long(8)}, recs...)} {
		f := newRowFormatter(cfg)
		var got, want []Row
		for _, r := range order {
			got, want = append(got, f.row(r)), append(want, slowRow(cfg, r))
		}
		for i := range order {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("record %d: row\n%q\nwant\n%q", i, got[i], want[i])
			}
		}
	}
}
