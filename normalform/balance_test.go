package normalform

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/holiman/uint256"
)

// flatBalance is δ_C computed the plain way: the sorted Deltas of the
// operands summed join by join.
func flatBalance(t *testing.T, c *Chain) Delta {
	if c.Leaf != nil {
		return TransferDelta(c.Leaf)
	}
	d, err := flatBalance(t, c.Left).Sum(flatBalance(t, c.Right))
	if err != nil {
		t.Fatalf("reference sum: %v", err)
	}
	return d
}

// TestBalanceForms joins random chains, small and large, in random order
// and checks every chain's balance — including inner chains whose balance
// was moved into a later join and must be rebuilt — against the plain sum.
func TestBalanceForms(t *testing.T) {
	for seed := int64(0); seed < 60; seed++ {
		r := rand.New(rand.NewSource(seed))
		addrs := make([]Address, 3+r.Intn(60))
		for i := range addrs {
			addrs[i][0], addrs[i][19] = byte(i), byte(r.Intn(256))
		}
		toks := make([]Token, 1+r.Intn(5))
		for i := range toks {
			toks[i] = FungibleToken(Address{0xee, byte(i)})
		}
		var all, live []*Chain
		for i := 0; i < 50+r.Intn(400); i++ {
			tr := &Transfer{Pos: int32(i), From: addrs[r.Intn(len(addrs))], To: addrs[r.Intn(len(addrs))],
				Token: toks[r.Intn(len(toks))], Amount: *uint256.NewInt(uint64(1 + r.Intn(5)))}
			c := leafChain(tr)
			all, live = append(all, c), append(live, c)
		}
		for len(live) > 1 {
			i := r.Intn(len(live) - 1)
			if r.Intn(2) == 0 {
				i = 0 // grow one chain: the route shape
			}
			c, err := join(live[i], live[i+1], R6, Chaining, false)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, c)
			live = append(live[:i+1], live[i+2:]...)
			live[i] = c
			// Read a random earlier chain now and then, as a reader of an
			// inner chain would: it rebuilds, and later joins still hold.
			if r.Intn(8) == 0 {
				x := all[r.Intn(len(all))]
				if got, want := x.Balance(), flatBalance(t, x); !equalDelta(got, want) {
					t.Fatalf("seed %d: chain of %d transfers mid-way: got %v, want %v", seed, x.N, got, want)
				}
			}
		}
		for _, c := range shuffled(r, all) {
			want := flatBalance(t, c)
			if got := c.Balance(); !equalDelta(got, want) {
				t.Fatalf("seed %d: chain of %d transfers: got %d entries, want %d", seed, c.N, len(got), len(want))
			}
			a := addrs[r.Intn(len(addrs))]
			if got := c.BalanceOf(a); !equalDelta(got, want.OfAddr(a)) {
				t.Fatalf("seed %d: BalanceOf: got %v, want %v", seed, got, want.OfAddr(a))
			}
			tok := toks[r.Intn(len(toks))]
			if got, w := c.BalanceAt(a, tok), want.At(a, tok); got.Cmp(w) != 0 {
				t.Fatalf("seed %d: BalanceAt: got %v, want %v", seed, got, w)
			}
		}
	}
}

// TestBalanceOverflow: a join whose sum leaves 256 bits fails with
// ErrOverflow, and its operands still read their own balances.
func TestBalanceOverflow(t *testing.T) {
	max := new(uint256.Int).SetAllOne()
	src, mid := Address{1}, Address{2}
	var chains []*Chain
	for i := 0; i < 2*flatMax; i++ { // large enough for the map form
		to := Address{3, byte(i)}
		chains = append(chains, leafChain(&Transfer{Pos: int32(i), From: mid, To: to, Token: NativeToken, Amount: *uint256.NewInt(1)}))
	}
	big := chains[0]
	for _, c := range chains[1:] {
		var err error
		if big, err = join(big, c, R6, Chaining, false); err != nil {
			t.Fatal(err)
		}
	}
	in1 := leafChain(&Transfer{Pos: 100, From: src, To: mid, Token: NativeToken, Amount: *max})
	in2 := leafChain(&Transfer{Pos: 101, From: src, To: mid, Token: NativeToken, Amount: *max})
	left, err := join(in1, big, R6, Chaining, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := join(left, in2, R6, Chaining, false); err != ErrOverflow {
		t.Fatalf("got %v, want ErrOverflow", err)
	}
	for _, c := range []*Chain{left, big, in2} {
		if got, want := c.Balance(), flatBalance(t, c); !equalDelta(got, want) {
			t.Fatalf("after the failed join, a chain of %d: got %v, want %v", c.N, got, want)
		}
	}
}

func equalDelta(a, b Delta) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func shuffled(r *rand.Rand, cs []*Chain) []*Chain {
	out := append([]*Chain(nil), cs...)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
