package layout

import (
	"errors"
	"testing"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// TestProfitBucket: a profit key holds its amount's bucket in 3 bytes
// (schema 13; the amount itself took 10 bytes for 1 ETH, 34 at most):
// zero's is 0x800000, one's the next, the largest gain and loss the ends
// of the range; a profit key parses back to its bucket and position, and
// a bucket no amount has is a bad key.
func TestProfitBucket(t *testing.T) {
	var max uint256.Int
	max.SetAllOne()
	for _, c := range []struct {
		s    normalform.Signed
		want uint32
	}{
		{normalform.Signed{}, 0x800000},
		{normalform.Signed{Abs: *uint256.NewInt(1)}, 0x800001},
		{normalform.Signed{Abs: *uint256.NewInt(1), Neg: true}, 0x7fffff},
		{normalform.Signed{Abs: *uint256.NewInt(3)}, 0x800001 + (1<<14 | 1<<13)},
		{normalform.Signed{Abs: max}, 0xc00000},
		{normalform.Signed{Abs: max, Neg: true}, 0x400000},
	} {
		b := ProfitBucket(c.s)
		if got := uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]); got != c.want {
			t.Errorf("ProfitBucket(%s) = %#06x, want %#06x", c.s, got, c.want)
		}
	}
	tok := normalform.FungibleToken(normalform.Address{1})
	one := normalform.Signed{Abs: *uint256.NewInt(1e18)}
	for _, v := range []normalform.Signed{one, {}, {Abs: max, Neg: true}} {
		for _, l := range []Loc{{Block: 7, Index: 0}, {Block: UnknownBlock, Index: UnknownIndex, Tx: normalform.Hash{9}}} {
			k := ProfitKey(Net, tok, v, l)
			got, err := ParseKey(k.Bytes())
			if err != nil || got.Bucket != ProfitBucket(v) || got.Loc != k.Loc {
				t.Errorf("%v at %v: parsed %v %v, %v", v, l, got.Bucket, got.Loc, err)
			}
		}
	}
	good := ProfitKey(Gross, tok, one, Loc{Block: 7}).Bytes()
	if len(good) != 1+1+6+3+LocWidth {
		t.Errorf("a profit key of 1 ETH: %d bytes", len(good))
	}
	at := 1 + 1 + 6 // kind, side, token tag
	for name, bucket := range map[string][]byte{"below the largest loss": {0x3f, 0xff, 0xff}, "above the largest gain": {0xc0, 0, 1}, "zero bytes": {0, 0, 0}} {
		b := append(append(append([]byte{}, good[:at]...), bucket...), good[at+3:]...)
		if _, err := ParseKey(b); !errors.Is(err, ErrBadKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
