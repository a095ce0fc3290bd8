package index

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

func h(b byte) normalform.Hash {
	var x normalform.Hash
	for i := range x {
		x[i] = b ^ byte(i)
	}
	return x
}

func ad(b byte) normalform.Address {
	var x normalform.Address
	for i := range x {
		x[i] = b + byte(i)
	}
	return x
}

func signed(neg bool, s string) normalform.Signed {
	v, err := uint256.FromDecimal(s)
	if err != nil {
		panic(err)
	}
	return normalform.Signed{Neg: neg, Abs: *v}
}

var maxU256 = "115792089237316195423570985008687907853269984665640564039457584007913129639935"

// allKinds has keys of every kind, with known and unknown positions,
// every token kind and amounts of each sign.
func allKinds() []Key {
	known := Loc{Block: 11017338, Index: 7}
	noIndex := Loc{Block: 11017338, Index: UnknownIndex, Tx: h(9)}
	noBlock := Loc{Block: UnknownBlock, Index: UnknownIndex, Tx: h(10)}
	nft := normalform.Token{Kind: normalform.NFT721, Addr: ad(3), ID: *uint256.NewInt(42)}
	multi := normalform.Token{Kind: normalform.Multi1155, Addr: ad(4), ID: *new(uint256.Int).SetAllOne()}
	weth := normalform.FungibleToken(ad(5))
	var out []Key
	out = append(out, SchemaKey(), InputKey(SourceOf("/tmp/a.json")), FailureKey(SourceOf("rpc:block:1"), 3), TxHashKey(h(1)),
		DictKey(normalform.Shape, h(4)), DictKey(normalform.Family, h(5)), NameKey(1), NameKey(1<<31), NextKey())
	for _, l := range []Loc{known, noIndex, noBlock, {}} {
		out = append(out, TxKey(l), HashKey(normalform.Family, Tag{}, 7, l), HashKey(normalform.Exact, Short(h(2)), 0, l), BotKey(ad(1), 3, l),
			VerdictKey(normalform.VerdictWarning, normalform.TierProbable, l), AddrKey(ad(2), l), TokenKey(nft, l), TokenKey(multi, l),
			TokenKey(normalform.NativeToken, l), ProfitKey(Gross, weth, signed(true, "5"), l), ProfitKey(Net, nft, signed(false, "1"), l),
			ProfitKey(Gross, multi, normalform.Signed{}, l), ProfitKey(Net, weth, signed(true, maxU256), l))
	}
	out = append(out, FirstKey(ad(1), 3), BlockKey(137), BlockKey(0), DirtyKey(MaxBlock), DirtyKey(5))
	// The posting keys of the secondary keys with a known position
	// (layout/posting.go): the key up to the block.
	for _, k := range out {
		if layout.PostingKind(k.Kind) && k.Loc.Known() {
			k.Posting, k.Loc = true, Loc{Block: k.Loc.Block}
			out = append(out, k)
		}
	}
	return out
}

func TestKeyRoundTrip(t *testing.T) {
	for _, k := range allKinds() {
		b := k.Bytes()
		if Kind(b[0]) != k.Kind {
			t.Errorf("%v: first byte %#x", k.Kind, b[0])
		}
		got, err := ParseKey(b)
		if err != nil {
			t.Errorf("%v %x: %v", k.Kind, b, err)
			continue
		}
		if got != k {
			t.Errorf("%v %x: parsed\n%+v\nwant\n%+v", k.Kind, b, got, k)
		}
		// Every proper prefix and any trailing byte is rejected, but a
		// secondary key's prefix that ends at its block: a posting key.
		for i := 0; i < len(b); i++ {
			if p, err := ParseKey(b[:i]); err == nil && !(k.Kind == KindSchema && i == 1) && !(p.Posting && p.Loc.Block == k.Loc.Block) {
				t.Errorf("%v: prefix %x parsed", k.Kind, b[:i])
			}
		}
		if _, err := ParseKey(append(append([]byte(nil), b...), 0)); err == nil {
			t.Errorf("%v: trailing byte accepted", k.Kind)
		}
	}
	for _, bad := range [][]byte{nil, {0x7f}, append([]byte{byte(KindHash), 9}, make([]byte, 12)...),
		append([]byte{byte(KindDict), 0}, make([]byte, 32)...)} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("%x parsed", bad)
		}
	}
}

// TestKeyRoundTripRandom: random keys of the per-transaction kinds.
func TestKeyRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		k := randomKey(r)
		got, err := ParseKey(k.Bytes())
		if err != nil || got != k {
			t.Fatalf("%+v: got %+v, %v", k, got, err)
		}
	}
}

func randomKey(r *rand.Rand) Key {
	var hh normalform.Hash
	var a normalform.Address
	for i := range hh {
		hh[i] = byte(r.IntN(256))
	}
	copy(a[:], hh[3:])
	l := Loc{Block: r.Uint64N(30_000_000), Index: uint32(r.IntN(400))}
	if r.IntN(5) == 0 {
		l = Loc{Block: l.Block, Index: UnknownIndex, Tx: hh}
	}
	tok := normalform.Token{Kind: normalform.TokenKind(r.IntN(4)), Addr: a}
	if tok.HasID() {
		tok.ID.SetUint64(r.Uint64())
	}
	switch r.IntN(6) {
	case 0:
		return TxKey(l)
	case 1:
		lv := normalform.Level(r.IntN(4))
		if lv == normalform.Exact {
			return HashKey(lv, Short(hh), 0, l)
		}
		return HashKey(lv, Tag{}, r.Uint32(), l)
	case 2:
		return BotKey(a, r.Uint32(), l)
	case 3:
		return ProfitKey(Side(r.IntN(2)), tok, randomSigned(r), l)
	case 4:
		return TokenKey(tok, l)
	}
	return VerdictKey(normalform.Verdict(r.IntN(3)), normalform.Tier(r.IntN(5)), l)
}

func randomSigned(r *rand.Rand) normalform.Signed {
	var s normalform.Signed
	words := [4]uint64{}
	for i := range r.IntN(5) {
		words[i] = r.Uint64() >> r.IntN(64)
	}
	s.Abs = uint256.Int(words)
	s.Neg = r.IntN(2) == 0 && !s.Abs.IsZero()
	return s
}

// TestBucketOrder: a profit key's bucket never orders two amounts
// against their numeric order (negatives before zero before positives,
// larger losses first), and tells apart amounts that differ in their 15
// leading bits.
func TestBucketOrder(t *testing.T) {
	want := []normalform.Signed{signed(true, maxU256), signed(true, "1000000000000000000000000"), signed(true, "18446744073709551616"),
		signed(true, "2"), signed(true, "1"), {}, signed(false, "1"), signed(false, "255"), signed(false, "256"),
		signed(false, "18446744073709551616"), signed(false, maxU256)}
	for i := 1; i < len(want); i++ {
		a, b := ProfitBucket(want[i-1]), ProfitBucket(want[i])
		if bytes.Compare(a[:], b[:]) >= 0 {
			t.Errorf("%s does not sort before %s", want[i-1], want[i])
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		a, b := randomSigned(r), randomSigned(r)
		if r.IntN(4) == 0 { // neighbours: the same leading bits, or nearly
			b = a
			b.Abs.AddUint64(&b.Abs, uint64(r.IntN(1000)))
		}
		ba, bb := ProfitBucket(a), ProfitBucket(b)
		got, w := bytes.Compare(ba[:], bb[:]), a.Cmp(b)
		if got != 0 && got != w {
			t.Fatalf("%s vs %s: buckets %d, numbers %d", a, b, got, w)
		}
		if got == 0 && w != 0 && a.Neg == b.Neg {
			// one bucket: the same sign, bit length and 14 bits after the
			// leading one
			n := a.Abs.BitLen()
			var x, y uint256.Int
			x.Rsh(&a.Abs, uint(max(n-15, 0)))
			y.Rsh(&b.Abs, uint(max(n-15, 0)))
			if n != b.Abs.BitLen() || x != y {
				t.Fatalf("%s and %s share a bucket", a, b)
			}
		}
	}
}

// TestKeyOrder: profit keys of one token sort by amount (losses first),
// then position; positions sort by block then index, unknown last.
func TestKeyOrder(t *testing.T) {
	weth := normalform.FungibleToken(ad(5))
	ordered := []Key{
		ProfitKey(Gross, weth, signed(true, "1000"), Loc{Block: 9}),
		ProfitKey(Gross, weth, signed(true, "3"), Loc{Block: 1}),
		ProfitKey(Gross, weth, signed(true, "3"), Loc{Block: 2}),
		ProfitKey(Gross, weth, signed(false, "1"), Loc{Block: 1, Index: 5}),
		ProfitKey(Gross, weth, signed(false, "1"), Loc{Block: 1, Index: 6}),
		ProfitKey(Gross, weth, signed(false, "1"), Loc{Block: 1, Index: UnknownIndex, Tx: h(1)}),
		ProfitKey(Gross, weth, signed(false, "1"), Loc{Block: 2}),
		ProfitKey(Gross, weth, signed(false, "7000000000000000000"), Loc{Block: 0}),
		ProfitKey(Gross, weth, signed(false, "7000000000000000000"), Loc{Block: UnknownBlock, Index: UnknownIndex, Tx: h(0)}),
		ProfitKey(Net, weth, signed(true, "1"), Loc{}),
		withKind(TxKey(Loc{Block: 255, Index: 1}), KindAddr),
	}
	for i := 1; i < len(ordered); i++ {
		if bytes.Compare(ordered[i-1].Bytes(), ordered[i].Bytes()) >= 0 {
			t.Errorf("key %d does not sort before key %d:\n%+v\n%+v", i-1, i, ordered[i-1], ordered[i])
		}
	}
	var locs []Loc
	for b := uint64(0); b < 300; b += 37 {
		for i := uint32(0); i < 600; i += 129 {
			locs = append(locs, Loc{Block: b, Index: i})
		}
		locs = append(locs, Loc{Block: b, Index: UnknownIndex, Tx: h(byte(b))})
	}
	locs = append(locs, Loc{Block: UnknownBlock, Index: UnknownIndex, Tx: h(1)}, Loc{Block: 1 << 40, Index: 3})
	keys := make([][]byte, len(locs))
	for i, l := range locs {
		keys[i] = TxKey(l).Bytes()
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	var prev *Loc
	for _, k := range keys {
		key, _ := ParseKey(k)
		l := key.Loc
		if prev != nil {
			numeric := prev.Block < l.Block || (prev.Block == l.Block && prev.Index < l.Index) ||
				(prev.Block == l.Block && prev.Index == l.Index && bytes.Compare(prev.Tx[:], l.Tx[:]) < 0)
			if !numeric {
				t.Errorf("position %+v sorts after %+v", l, *prev)
			}
		}
		prev = &l
	}
	// The kinds' own order is their byte order.
	for i := 1; i < len(Kinds); i++ {
		if Kinds[i-1] >= Kinds[i] {
			t.Errorf("Kinds not in byte order at %v", Kinds[i])
		}
	}
}

// withKind is for TestKeyOrder: the same fields under another kind.
func withKind(k Key, kind Kind) Key { k.Kind = kind; return k }

func TestBlockBounds(t *testing.T) {
	p := []byte{byte(KindTx)}
	lo, hi := blockBounds(p, 10, 20)
	in := [][]byte{TxKey(Loc{Block: 10}).Bytes(), TxKey(Loc{Block: 20, Index: UnknownIndex, Tx: h(1)}).Bytes()}
	out := [][]byte{TxKey(Loc{Block: 9, Index: UnknownIndex, Tx: h(2)}).Bytes(), TxKey(Loc{Block: 21}).Bytes()}
	for _, k := range in {
		if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
			t.Errorf("%x not in [%x, %x)", k, lo, hi)
		}
	}
	for _, k := range out {
		if bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) < 0 {
			t.Errorf("%x in [%x, %x)", k, lo, hi)
		}
	}
	if _, hi := blockBounds(p, 0, UnknownBlock); !bytes.Equal(hi, []byte{byte(KindTx) + 1}) {
		t.Errorf("open range ends at %x", hi)
	}
	if prefixEnd([]byte{0xff, 0xff}) != nil || !bytes.Equal(prefixEnd([]byte{1, 0xff}), []byte{2}) {
		t.Error("prefixEnd")
	}
}

// TestLocWidth: a loc takes 8 bytes (5 of block, 3 of index); the largest
// known block and index round-trip and sort before unknown ones; a block
// range past MaxBlock stops before the unknown blocks unless it is open.
func TestLocWidth(t *testing.T) {
	locs := []Loc{
		{Block: 0, Index: 0},
		{Block: 0, Index: MaxIndex},
		{Block: 1 << 32, Index: 5},
		{Block: MaxBlock, Index: MaxIndex},
		{Block: MaxBlock, Index: UnknownIndex, Tx: h(1)},
		{Block: UnknownBlock, Index: UnknownIndex, Tx: h(1)},
	}
	for i, l := range locs {
		k := TxKey(l)
		b := k.Bytes()
		want := 1 + locWidth
		if !l.Known() {
			want += 32
		}
		if len(b) != want {
			t.Errorf("%+v: key of %d bytes, want %d", l, len(b), want)
		}
		got, err := ParseKey(b)
		if err != nil || got != k {
			t.Errorf("%+v: parsed %+v, %v", l, got, err)
		}
		if i > 0 && !locs[i-1].Less(l) {
			t.Errorf("%+v does not sort before %+v", locs[i-1], l)
		}
	}
	unknown := TxKey(Loc{Block: UnknownBlock, Index: UnknownIndex, Tx: h(1)}).Bytes()
	lo, hi := blockBounds(kindPrefix(KindTx), MaxBlock, MaxBlock+7)
	last := TxKey(Loc{Block: MaxBlock, Index: MaxIndex}).Bytes()
	if bytes.Compare(lo, last) > 0 || bytes.Compare(last, hi) >= 0 {
		t.Errorf("MaxBlock outside its own range")
	}
	if bytes.Compare(unknown, hi) < 0 {
		t.Errorf("a closed range past MaxBlock includes unknown blocks")
	}
	if _, hi := blockBounds(kindPrefix(KindTx), 0, UnknownBlock); bytes.Compare(unknown, hi) >= 0 {
		t.Errorf("AllBlocks excludes unknown blocks")
	}
}
