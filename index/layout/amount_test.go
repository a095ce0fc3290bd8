package layout

import (
	"bytes"
	"errors"
	"sort"
	"testing"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// TestAmountVariableWidth: an amount in a profit key takes its minimal
// bytes (1 ETH in 10 bytes, zero in 1; issue 22: it took 33), the byte
// order of the encodings is the numeric order across signs and widths,
// no encoding is the prefix of another's key (a profit key parses back to
// its amount and position), and a non-minimal or overlong amount is a bad
// key.
func TestAmountVariableWidth(t *testing.T) {
	one := normalform.Signed{Abs: *uint256.NewInt(1e18)}
	if n := len(AmountBytes(one)); n != 10 {
		t.Errorf("1 ETH: %d bytes, want 10", n)
	}
	if n := len(AmountBytes(normalform.Signed{})); n != 1 {
		t.Errorf("zero: %d bytes, want 1", n)
	}
	var max uint256.Int
	max.SetAllOne()
	var vals []normalform.Signed
	for _, v := range []*uint256.Int{uint256.NewInt(1), uint256.NewInt(255), uint256.NewInt(256), uint256.NewInt(65535), uint256.NewInt(1e18), new(uint256.Int).Lsh(uint256.NewInt(1), 200), &max} {
		vals = append(vals, normalform.Signed{Abs: *v}, normalform.Signed{Abs: *v, Neg: true})
	}
	vals = append(vals, normalform.Signed{})
	sort.Slice(vals, func(i, j int) bool { return vals[i].Cmp(vals[j]) < 0 })
	tok := normalform.FungibleToken(normalform.Address{1})
	for i, v := range vals {
		if i > 0 && bytes.Compare(AmountBytes(vals[i-1]), AmountBytes(v)) >= 0 {
			t.Errorf("%v sorts at or after %v", vals[i-1], v)
		}
		for _, l := range []Loc{{Block: 7, Index: 0}, {Block: UnknownBlock, Index: UnknownIndex, Tx: normalform.Hash{9}}} {
			k := ProfitKey(Net, tok, v, l)
			got, err := ParseKey(k.Bytes())
			if err != nil || got.Amount != v || got.Loc != k.Loc {
				t.Errorf("%v at %v: parsed %v %v, %v", v, l, got.Amount, got.Loc, err)
			}
		}
	}
	good := ProfitKey(Gross, tok, one, Loc{Block: 7}).Bytes()
	at := 1 + 1 + 6 // kind, side, token tag
	for name, b := range map[string][]byte{
		"leading zero": append(append(append([]byte{}, good[:at]...), amountPos, 9, 0), good[at+2:]...),
		"length 33":    append(append([]byte{}, good[:at]...), append([]byte{amountPos, 33}, make([]byte, 41)...)...),
		"length 0":     append(append([]byte{}, good[:at]...), append([]byte{amountPos, 0}, good[at+2+8:]...)...),
	} {
		if _, err := ParseKey(b); !errors.Is(err, ErrBadKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
