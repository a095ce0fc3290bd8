package workload

import (
	"encoding/hex"
	"math/big"
	"math/rand"
	"testing"
)

// TestAppendHexSameAsStdlib: the generator's hex writers give what
// encoding/hex and big.Int.Append(_, 16) give, for every byte value and
// for quantities from 0 to 2^256-1 (leading zero bytes and nibbles too).
func TestAppendHexSameAsStdlib(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if got, want := string(appendHex([]byte("x"), all)), "x"+hex.EncodeToString(all); got != want {
		t.Fatalf("appendHex:\n got %s\nwant %s", got, want)
	}
	r := rand.New(rand.NewSource(1))
	vals := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(15), big.NewInt(16), big.NewInt(255), big.NewInt(256), big.NewInt(4095),
		new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))}
	for range 2000 {
		vals = append(vals, new(big.Int).Rand(r, new(big.Int).Lsh(big.NewInt(1), uint(r.Intn(257)))))
	}
	var word [32]byte
	for _, v := range vals {
		if got, want := string(appendHexQty([]byte("0x"), v.FillBytes(word[:]))), string(v.Append([]byte("0x"), 16)); got != want {
			t.Fatalf("appendHexQty(%s) = %s, want %s", v, got, want)
		}
	}
}
