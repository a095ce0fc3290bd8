package trace

import (
	"bytes"
	"encoding/hex"
	"math/rand"
	"testing"
)

// TestSkipWS checks the word-at-a-time whitespace skip against a
// byte-by-byte reference at every start offset of buffers built from
// runs of spaces (of every length up to 20, so that the end of an
// indentation run falls at every position of a word), newlines, tabs,
// carriage returns, control bytes that are not whitespace, and value
// bytes.
func TestSkipWS(t *testing.T) {
	ref := func(b []byte, i int) int {
		for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
			i++
		}
		return i
	}
	pieces := [][]byte{{'\n'}, {'\t'}, {'\r'}, {0x00}, {0x0b}, {0x1f}, {'"'}, {'x'}, {','}, {0xa0}}
	for n := 0; n <= 20; n++ {
		pieces = append(pieces, bytes.Repeat([]byte{' '}, n))
	}
	r := rand.New(rand.NewSource(22))
	for round := 0; round < 3000; round++ {
		var b []byte
		for len(b) < 48 {
			b = append(b, pieces[r.Intn(len(pieces))]...)
		}
		b = b[:r.Intn(len(b)+1)]
		for i := 0; i <= len(b); i++ {
			if got, want := skipWS(b, i), ref(b, i); got != want {
				t.Fatalf("skipWS(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	}
}

// TestQuoteAt checks quoteAt (the lax string skip's word-at-a-time search
// for '"') against bytes.IndexByte for every start offset and every
// position of the quote, with bytes on either side of '"' (0x21, 0x23)
// and bytes with the top bit set, which a borrow could confuse.
func TestQuoteAt(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for at := -1; at < n; at++ {
			for _, fill := range []byte{'!', '#', 0xa2, 0x00, 0xff} {
				b := bytes.Repeat([]byte{fill}, n)
				if at >= 0 {
					b[at] = '"'
				}
				for k := 0; k <= n; k++ {
					want := len(b)
					if j := bytes.IndexByte(b[k:], '"'); j >= 0 {
						want = k + j
					}
					if got := quoteAt(b, k); got != want {
						t.Fatalf("quoteAt(%q, %d) = %d, want %d", b, k, got, want)
					}
				}
			}
		}
	}
}

// TestHexBytes checks hexBytes (whole words by hexWords, the tail a byte
// at a time) against encoding/hex for every length up to 40 bytes, and
// that a bad digit at any position, in a word or in the tail, fails.
func TestHexBytes(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	for n := 0; n <= 40; n++ {
		raw := make([]byte, n)
		r.Read(raw)
		digits := []byte(hex.EncodeToString(raw))
		for i := range digits {
			if r.Intn(2) == 0 {
				digits[i] = bytes.ToUpper(digits[i : i+1])[0]
			}
		}
		doc := []byte(`"0x` + string(digits) + `"`)
		s := newScanner(doc, 0)
		if got := s.hexBytes(); s.err != nil || !bytes.Equal(got, raw) {
			t.Fatalf("hexBytes(%s) = %x (%v), want %x", doc, got, s.err, raw)
		}
		for at := 3; at < len(doc)-1; at++ {
			for _, bad := range []byte{'g', 'G', '/', ':', '@', '`', 0x80 | '1'} {
				d := append([]byte(nil), doc...)
				d[at] = bad
				s := newScanner(d, 0)
				if got := s.hexBytes(); s.err == nil {
					t.Fatalf("hexBytes(%q) = %x, want an error (bad digit at %d)", d, got, at)
				}
			}
		}
	}
}
