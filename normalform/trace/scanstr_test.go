package trace

import "testing"

// TestScanStr checks scanStr against a byte-by-byte reference for every
// start offset and every position of each kind of special byte (quote,
// backslash, a control byte) in buffers of up to 40 bytes, and with no
// special byte at all: the word loop and the tail must agree at every
// boundary.
func TestScanStr(t *testing.T) {
	ref := func(b []byte, k int) int {
		for ; k < len(b); k++ {
			if c := b[k]; c == '"' || c == '\\' || c < 0x20 {
				return k
			}
		}
		return k
	}
	for n := 0; n <= 40; n++ {
		for _, special := range []byte{'"', '\\', 0x1f, 0x00, 0} {
			for at := -1; at < n; at++ {
				b := make([]byte, n)
				for i := range b {
					b[i] = 'a' + byte(i%26)
				}
				if at >= 0 {
					b[at] = special
				}
				for k := 0; k <= n+1; k++ {
					if got, want := scanStr(b, k), ref(b, k); got != want {
						t.Fatalf("scanStr(%q, %d) = %d, want %d", b, k, got, want)
					}
				}
			}
		}
	}
}
