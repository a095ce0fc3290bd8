package layout

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// TestPostingEncoding: a posting's value is the uvarint of its first
// index and of each difference, and parses back; each posting kind's
// per-transaction key with a known index splits into its posting key
// and the index (Entry is the inverse), and a key without index does
// not split.
func TestPostingEncoding(t *testing.T) {
	for _, c := range []struct {
		idx []uint32
		v   []byte
	}{
		{[]uint32{0}, []byte{0}},
		{[]uint32{0, 1, 2}, []byte{0, 1, 1}},
		{[]uint32{5, 133}, []byte{5, 0x80, 0x01}},
		{[]uint32{MaxIndex}, []byte{0xfe, 0xff, 0xff, 0x07}},
		{[]uint32{3, 3 + 16384}, []byte{3, 0x80, 0x80, 0x01}},
	} {
		v := AppendPosting(nil, c.idx)
		if !bytes.Equal(v, c.v) {
			t.Fatalf("%v encoded %x, want %x", c.idx, v, c.v)
		}
		got, err := ParsePosting([]byte{byte(KindVerdict), 2, 0, 0, 0, 0, 0, 9}, v, nil)
		if err != nil || !slices.Equal(got, c.idx) {
			t.Fatalf("%x parsed to %v, %v; want %v", v, got, err, c.idx)
		}
	}
	known := Loc{Block: 11017338, Index: 300}
	tok := normalform.FungibleToken(normalform.Address{5})
	for _, k := range []Key{
		HashKey(normalform.Exact, Short(normalform.Hash{2}), 0, known), HashKey(normalform.Tokens, Tag{}, 9, known),
		BotKey(normalform.Address{1}, 3, known), VerdictKey(normalform.VerdictArbitrage, normalform.TierConfirmed, known),
		ProfitKey(Gross, tok, normalform.Signed{}, known), ProfitKey(Net, tok, normalform.Signed{Neg: true, Abs: *new(uint256.Int).SetUint64(1 << 40)}, known),
		ProfitKey(Net, tok, normalform.Signed{Abs: *new(uint256.Int).SetAllOne()}, known),
		AddrKey(normalform.Address{7}, known), TokenKey(tok, known),
	} {
		b := k.Bytes()
		pk, i, ok := SplitPosting(b)
		if !ok || i != known.Index || !bytes.Equal(Entry(nil, pk, i), b) {
			t.Fatalf("%s key %x: split to %x, %d, %v", k.Kind, b, pk, i, ok)
		}
		p, err := ParseKey(pk)
		if err != nil || !p.Posting || p.Loc != (Loc{Block: known.Block}) {
			t.Fatalf("%s posting key %x parsed to %+v, %v", k.Kind, pk, p, err)
		}
		if h, ok := IsPostingKey(pk); !ok || h != len(pk)-BlockWidth {
			t.Fatalf("%s posting key %x: not one (%d, %v)", k.Kind, pk, h, ok)
		}
		lone := k
		lone.Loc = Loc{Block: known.Block, Index: UnknownIndex, Tx: normalform.Hash{9}}
		if _, _, ok := SplitPosting(lone.Bytes()); ok {
			t.Fatalf("%s key without index split into a posting", k.Kind)
		}
		if _, ok := IsPostingKey(lone.Bytes()); ok {
			t.Fatalf("%s key without index taken for a posting key", k.Kind)
		}
		_, err = ParsePosting(pk, []byte{1, 0}, nil)
		var pe *PostingError
		if !errors.As(err, &pe) || !errors.Is(err, ErrBadPosting) || pe.Block != known.Block || !strings.Contains(err.Error(), k.Kind.String()+" posting") {
			t.Fatalf("%s posting with a zero difference: %v", k.Kind, err)
		}
	}
	if _, _, ok := SplitPosting(TxKey(known).Bytes()); ok {
		t.Fatal("a tx key split into a posting")
	}
}
