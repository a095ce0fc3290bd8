package trace

import "testing"

// TestHexWords checks the word-at-a-time hex decoding (hexWords) against the byte
// table on every byte value in every position of a word of digits.
func TestHexWords(t *testing.T) {
	base := []byte("0a1B2c3D")
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			w := append([]byte(nil), base...)
			w[pos] = byte(c)
			var want [4]byte
			ok := true
			for k := range want {
				hi, lo := unhexTable[w[2*k]], unhexTable[w[2*k+1]]
				if hi > 15 || lo > 15 {
					ok = false
				}
				want[k] = hi<<4 | lo
			}
			var v [4]byte
			if got := hexWords(v[:], w); got != ok {
				t.Fatalf("%q: valid %v, want %v", w, got, ok)
			}
			if ok && v != want {
				t.Fatalf("%q: % x, want % x", w, v, want)
			}
		}
	}
}
