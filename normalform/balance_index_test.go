package normalform

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"

	"github.com/holiman/uint256"
)

// TestBalanceIndex fills a large balance's address index (open addressing,
// grown as it fills) with thousands of addresses, the zero address among
// them, in four tokens (so that some lists outgrow their slot), cancels
// some, and checks every address's entries and the absent addresses
// against a map kept beside it.
func TestBalanceIndex(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	toks := []Token{FungibleToken(Address{0xee, 1}), FungibleToken(Address{0xee, 2}), FungibleToken(Address{0xee, 3}), FungibleToken(Address{0xee, 4})}
	tok := toks[0]
	addrs := make([]Address, 6000)
	for i := 1; i < len(addrs); i++ { // addrs[0] is the zero address
		r.Read(addrs[i][:])
	}
	first := make(Delta, 0, 40)
	for _, a := range addrs[:40] {
		first = append(first, DeltaEntry{Addr: a, Token: tok, Amount: Signed{Abs: *uint256.NewInt(1)}})
	}
	// Addresses whose first entries do not fit a slot: in the first δ,
	// and added later, three tokens at once.
	for _, a := range addrs[40:46] {
		for _, tk := range toks[1:] {
			first = append(first, DeltaEntry{Addr: a, Token: tk, Amount: Signed{Abs: *uint256.NewInt(1)}})
		}
	}
	slices.SortFunc(first, func(x, y DeltaEntry) int {
		if c := bytes.Compare(x.Addr[:], y.Addr[:]); c != 0 {
			return c
		}
		return compareToken(&x.Token, &y.Token)
	})
	b := newBalance(first)
	type key struct {
		a Address
		t int
	}
	want := map[key]int64{}
	for _, a := range addrs[:40] {
		want[key{a, 0}] = 1
	}
	for _, a := range addrs[40:46] {
		for k := 1; k < len(toks); k++ {
			want[key{a, k}] = 1
		}
	}
	for _, a := range addrs[46:52] {
		var d Delta
		for k, tk := range toks[:3] {
			d = append(d, DeltaEntry{Addr: a, Token: tk, Amount: Signed{Neg: true, Abs: *uint256.NewInt(2)}})
			want[key{a, k}] = -2
		}
		if err := b.add(a, d); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 30000; i++ {
		a, k := addrs[r.Intn(len(addrs))], r.Intn(len(toks))
		v := int64(1 + r.Intn(3))
		neg := r.Intn(2) == 0
		if neg {
			v = -v
		}
		if err := b.add(a, Delta{{Addr: a, Token: toks[k], Amount: Signed{Neg: neg, Abs: *uint256.NewInt(uint64(max(v, -v)))}}}); err != nil {
			t.Fatal(err)
		}
		want[key{a, k}] += v
	}
	long := 0
	for _, a := range addrs {
		got := b.of(a)
		var w Delta
		for k, tk := range toks { // sorted by token, as a list is
			if v := want[key{a, k}]; v != 0 {
				w = append(w, DeltaEntry{Addr: a, Token: tk, Amount: Signed{Neg: v < 0, Abs: *uint256.NewInt(uint64(max(v, -v)))}})
			}
		}
		if len(got) != len(w) {
			t.Fatalf("address %x: entries %v, want %v", a, got, w)
		}
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("address %x: entries %v, want %v", a, got, w)
			}
		}
		if len(w) > 2 {
			long++
		}
	}
	if long == 0 {
		t.Fatal("no address has more entries than a slot holds: the test does not reach the lists kept apart")
	}
	for i := 0; i < 1000; i++ {
		var a Address
		r.Read(a[:])
		if got := b.of(a); got != nil {
			t.Fatalf("absent address %x: entries %v", a, got)
		}
	}
	if 2*b.nAddr > len(b.tab) {
		t.Fatalf("index %d positions for %d addresses: more than half full", len(b.tab), b.nAddr)
	}
}

// TestBalanceTokens: a large balance keeps the tokens of the entries held
// in its slots once, by number (balance.toks). Many tokens (ERC-721 and
// ERC-1155 ids of one contract, fungible tokens, the native asset), so
// that the token index grows several times, in entries added in random
// order, checked against a map kept beside it, through of, ofIn, each
// and flat.
func TestBalanceTokens(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	var toks []Token
	for i := range 300 {
		switch i % 3 {
		case 0:
			toks = append(toks, Token{Addr: Address{0xaa}, Kind: NFT721, ID: *uint256.NewInt(uint64(i))})
		case 1:
			toks = append(toks, Token{Addr: Address{0xaa}, Kind: Multi1155, ID: *uint256.NewInt(uint64(i))})
		default:
			toks = append(toks, FungibleToken(Address{0xbb, byte(i)}))
		}
	}
	toks = append(toks, NativeToken, Token{Addr: Address{0xaa}, Kind: NFT721, ID: *new(uint256.Int).Lsh(uint256.NewInt(1), 200)})
	addrs := make([]Address, 3000)
	for i := range addrs {
		r.Read(addrs[i][:])
	}
	b := newBalance(nil)
	type key struct {
		a Address
		t int
	}
	want := map[key]int64{}
	for range 20000 {
		a, k := addrs[r.Intn(len(addrs))], r.Intn(len(toks))
		if r.Intn(4) == 0 {
			k = r.Intn(3) // a few tokens often, so that some sums cancel
		}
		v := int64(1 + r.Intn(3))
		neg := r.Intn(2) == 0
		if neg {
			v = -v
		}
		if err := b.add(a, Delta{{Addr: a, Token: toks[k], Amount: Signed{Neg: neg, Abs: *uint256.NewInt(uint64(max(v, -v)))}}}); err != nil {
			t.Fatal(err)
		}
		want[key{a, k}] += v
	}
	wantOf := func(a Address) Delta {
		var w Delta
		for k, tk := range toks {
			if v := want[key{a, k}]; v != 0 {
				w = append(w, DeltaEntry{Addr: a, Token: tk, Amount: Signed{Neg: v < 0, Abs: *uint256.NewInt(uint64(max(v, -v)))}})
			}
		}
		slices.SortFunc(w, func(x, y DeltaEntry) int { return compareToken(&x.Token, &y.Token) })
		return w
	}
	var all Delta
	seen := 0
	for _, a := range addrs {
		w := wantOf(a)
		var buf [2]DeltaEntry
		for _, got := range []Delta{b.of(a), b.ofIn(a, &buf)} {
			if !slices.Equal(got, w) {
				t.Fatalf("address %x: entries %v, want %v", a, got, w)
			}
		}
		all = append(all, w...)
	}
	b.each(func(d Delta) { seen += len(d) })
	if seen != len(all) || b.n != len(all) {
		t.Fatalf("each saw %d entries, the balance counts %d, want %d", seen, b.n, len(all))
	}
	slices.SortFunc(all, func(x, y DeltaEntry) int { return compareKey(&x, &y.Addr, &y.Token) })
	if got := b.flat(); !slices.Equal(got, all) {
		t.Fatalf("flat: %d entries, want %d", len(got), len(all))
	}
	held, apart := 0, 0
	for _, ch := range b.chunks {
		for i := range ch {
			if ch[i].ext > 0 {
				apart++
			} else if ch[i].len > 0 {
				held++
			}
		}
	}
	if held < 100 || apart < 100 {
		t.Fatalf("%d addresses' entries held in place, %d kept apart: the test reaches too few of one kind", held, apart)
	}
	if len(b.toks) < 200 || 2*len(b.toks) > len(b.tokTab) {
		t.Fatalf("%d tokens numbered, index of %d: want most of %d, at most half full", len(b.toks), len(b.tokTab), len(toks))
	}
}
