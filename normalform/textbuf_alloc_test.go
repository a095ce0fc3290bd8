package normalform

import (
	"math/rand"
	"testing"

	"github.com/holiman/uint256"
)

// TestTextBufDecAllocations: the canonical texts write an amount past
// 2^64 (most token amounts) into their buffer without making a string
// of it first (issue 22, session 7: Int.Dec's string was one allocation
// an amount of Hashes' exact text).
func TestTextBufDecAllocations(t *testing.T) {
	var v uint256.Int
	v.SetAllOne()
	b := textBuf{b: make([]byte, 0, 256)}
	if n := testing.AllocsPerRun(100, func() {
		b.b = b.b[:0]
		b.dec(&v)
	}); n != 0 {
		t.Fatalf("textBuf.dec of 2^256-1: %.1f allocations, want 0", n)
	}
}

// TestSignedStringSameAsDec: Signed.String and decString, now written
// through AppendDec, give Int.Dec's text (with a minus sign for a
// negative non-zero amount), at the edges and at random.
func TestSignedStringSameAsDec(t *testing.T) {
	var max uint256.Int
	max.SetAllOne()
	vals := []uint256.Int{*uint256.NewInt(0), *uint256.NewInt(7), *uint256.NewInt(^uint64(0)),
		*new(uint256.Int).AddUint64(uint256.NewInt(^uint64(0)), 1), *uint256.MustFromDecimal("10000000000000000000"),
		*uint256.MustFromDecimal("100000000000000000000000000000000000000"), max}
	r := rand.New(rand.NewSource(8))
	for range 3000 {
		var v uint256.Int
		for w := 0; w < 1+r.Intn(4); w++ {
			v[w] = r.Uint64() >> uint(r.Intn(64))
		}
		vals = append(vals, v)
	}
	for _, v := range vals {
		if got := decString(&v); got != v.Dec() {
			t.Fatalf("decString(%s) = %q, want %q", v.Hex(), got, v.Dec())
		}
		for _, neg := range []bool{false, true} {
			want := v.Dec()
			if neg && !v.IsZero() {
				want = "-" + want
			}
			if got := (Signed{Neg: neg, Abs: v}).String(); got != want {
				t.Fatalf("Signed{%v, %s}.String() = %q, want %q", neg, v.Hex(), got, want)
			}
		}
	}
}

// TestCanonicalTextAllocations: a canonical text (the family's key of a
// star or cycle, a level's text) is written into a pooled buffer and made
// a string once, not grown from nothing for each text (issue 22, session
// 7: about 4 allocations a synthetic transaction).
func TestCanonicalTextAllocations(t *testing.T) {
	if raceBuild {
		t.Skip("allocation counts mean nothing under the race detector (sync.Pool drops at random)")
	}
	var swaps []*Term
	for i := range 80 {
		var a Address
		a[19] = byte(i%8 + 1) // few variables: the namer's tables stay small
		swaps = append(swaps, &Term{Kind: TSwap, At: a, In: FungibleToken(a), Out: NativeToken})
	}
	cycle := &Term{Kind: TCycle, Label: Arbitrage, In: NativeToken, Out: NativeToken, Parts: []*Term{seq(swaps)}}
	ts := []*Term{cycle}
	if text := canonicalText(Shape, ts); len(text) < 1500 {
		t.Fatalf("the text is %d bytes: too short to grow a buffer", len(text))
	}
	if n := testing.AllocsPerRun(50, func() { _ = canonicalText(Shape, ts) }); n > 1 {
		t.Fatalf("canonicalText of an 80-swap cycle: %.0f allocations, want 1 (the string)", n)
	}
}
