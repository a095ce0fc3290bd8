package normalform

import (
	"math/rand"
	"testing"

	"github.com/holiman/uint256"
)

// TestTextBufDecSameAsDec: textBuf.dec writes Int.Dec's text, below 2^64
// (its own path) and above, at the edges and at random.
func TestTextBufDecSameAsDec(t *testing.T) {
	var max uint256.Int
	max.SetAllOne()
	vals := []*uint256.Int{uint256.NewInt(0), uint256.NewInt(1), uint256.NewInt(9), uint256.NewInt(10),
		uint256.NewInt(^uint64(0)), new(uint256.Int).AddUint64(uint256.NewInt(^uint64(0)), 1), &max}
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 2000; i++ {
		v := new(uint256.Int)
		for w := 0; w < 1+r.Intn(4); w++ {
			v[w] = r.Uint64() >> uint(r.Intn(64))
		}
		vals = append(vals, v)
	}
	var b textBuf
	for _, v := range vals {
		b.b = append(b.b[:0], 'x')
		b.dec(v)
		if got, want := string(b.b), "x"+v.Dec(); got != want {
			t.Fatalf("dec(%s) wrote %q, want %q", v.Hex(), got, want)
		}
	}
}
