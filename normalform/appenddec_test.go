package normalform

import (
	"math/rand"
	"testing"

	"github.com/holiman/uint256"
)

// TestAppendDec: AppendDec writes uint256.Int.Dec's digits for zero,
// powers of ten and their neighbours around 2^64 and 10^19 and their
// multiples, the largest value, and random values of every width, and
// allocates nothing.
func TestAppendDec(t *testing.T) {
	var vals []*uint256.Int
	ten := uint256.NewInt(10)
	p := uint256.NewInt(1)
	for range 78 {
		for _, d := range []int64{-1, 0, 1} {
			v := new(uint256.Int).Set(p)
			if d < 0 {
				v.Sub(v, uint256.NewInt(1))
			} else {
				v.Add(v, uint256.NewInt(uint64(d)))
			}
			vals = append(vals, v)
		}
		p = new(uint256.Int).Mul(p, ten)
	}
	max := new(uint256.Int).SetAllOne()
	vals = append(vals, new(uint256.Int), max, new(uint256.Int).Lsh(uint256.NewInt(1), 64), new(uint256.Int).Sub(new(uint256.Int).Lsh(uint256.NewInt(1), 64), uint256.NewInt(1)))
	rng := rand.New(rand.NewSource(22))
	for range 2000 {
		var v uint256.Int
		for i := range v {
			v[i] = rng.Uint64()
		}
		v.Rsh(&v, uint(rng.Intn(256)))
		vals = append(vals, &v)
	}
	var b []byte
	for _, v := range vals {
		b = AppendDec(append(b[:0], 'x'), v)
		if got, want := string(b[1:]), v.Dec(); got != want {
			t.Errorf("AppendDec(%s) = %s", want, got)
		}
	}
	buf := make([]byte, 0, 100)
	if n := testing.AllocsPerRun(100, func() { buf = AppendDec(buf[:0], max) }); n != 0 {
		t.Errorf("AppendDec: %.1f allocations, want none", n)
	}
}

// BenchmarkAppendDec writes amounts as a find's rows meet them: token
// amounts in base units of 21 to 29 digits (above 2^64).
func BenchmarkAppendDec(b *testing.B) {
	vs := []*uint256.Int{
		uint256.MustFromDecimal("123456789012345678901"),
		uint256.MustFromDecimal("98765432109876543210987654321"),
		uint256.MustFromDecimal("5000000000000000000000"),
	}
	buf := make([]byte, 0, 100)
	for b.Loop() {
		for _, v := range vs {
			buf = AppendDec(buf[:0], v)
		}
	}
}
