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

// TestScanStrMixed is TestScanStr with other bytes around the special one:
// those the word loop's first test flags without being special (a space,
// '!', '#', '/', below '0'), those next to its bounds ('0', '[', ']', 0x7f)
// and bytes at or above 0x80, in every combination a seeded generator
// gives, at every start offset.
func TestScanStrMixed(t *testing.T) {
	ref := func(b []byte, k int) int {
		for ; k < len(b); k++ {
			if c := b[k]; c == '"' || c == '\\' || c < 0x20 {
				return k
			}
		}
		return k
	}
	fill := []byte{' ', '!', '#', '/', '0', '9', 'a', 'f', 'x', '[', ']', 0x7f, 0x80, 0xc3, 0xff, '"', '\\', 0x1f, 0x00, 0x20, 0x2f}
	seed := uint64(1)
	next := func() int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed >> 33)
	}
	for round := 0; round < 20000; round++ {
		n := next() % 41
		b := make([]byte, n)
		for i := range b {
			// mostly bytes that are not special, so that words reach the
			// second test and pass it
			if next()%8 == 0 {
				b[i] = fill[next()%len(fill)]
			} else {
				b[i] = fill[next()%15]
			}
		}
		for k := 0; k <= n+1; k++ {
			if got, want := scanStr(b, k), ref(b, k); got != want {
				t.Fatalf("scanStr(%q, %d) = %d, want %d", b, k, got, want)
			}
		}
	}
}
