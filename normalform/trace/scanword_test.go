package trace

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/flowq/flowq/normalform"
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

// TestHashRepeat checks that a hash whose text repeats the last one read
// is taken from the last one only when every byte is the same: a list of
// hashes, each differing from the one before in one byte (a digit, a bad
// digit, the closing quote, the case of a digit), decodes as each would
// alone.
func TestHashRepeat(t *testing.T) {
	h := "0x" + strings.Repeat("ab01", 16)
	withAt := func(at int, c byte) string {
		b := []byte(h)
		b[at] = c
		return string(b)
	}
	items := []string{
		`"` + h + `"`,
		`"` + h + `"`,
		`"` + withAt(65, 'c') + `"`,
		`"` + withAt(65, 'c') + `"`,
		`"` + withAt(2, 'A') + `"`,
		`"` + withAt(2, 'A') + `"`,
		`"` + h + `"`,
	}
	var want []normalform.Hash
	for _, it := range items {
		s := newScanner([]byte(it), 0)
		want = append(want, s.hash())
		if s.err != nil {
			t.Fatalf("%s alone: %v", it, s.err.msg)
		}
	}
	doc := "[" + strings.Join(items, ",") + "]"
	s := newScanner([]byte(doc), 0)
	s.arrBegin()
	for k := 0; s.arrNext(); k++ {
		if got := s.hash(); s.err != nil || got != want[k] {
			t.Fatalf("item %d of %s: %x (%v), want %x", k, doc, got, s.err, want[k])
		}
	}
	if s.err != nil {
		t.Fatal(s.err.msg)
	}
	for _, bad := range []string{withAt(65, 'g'), withAt(30, '"'), withAt(10, '\\'), withAt(3, 0x01)} {
		doc := `["` + h + `","` + bad + `"]`
		s := newScanner([]byte(doc), 0)
		s.arrBegin()
		for s.arrNext() {
			s.hash()
		}
		if s.err == nil {
			t.Errorf("%s: accepted, want an error for the second hash", doc)
		}
	}
}

// TestSkipSame checks that skipSame accepts exactly what json.Valid
// accepts over lists of two and three values, each a repeat, a near
// repeat (a byte changed, cut or added after the closing quote) or not a
// string at all, so that stepping over a repeated string never steps over
// anything that differs from it.
func TestSkipSame(t *testing.T) {
	h := `"0x6a191156050aab2babfd8985ec263d5d25b972a3852f27bc6aacb5354595c908"`
	vals := []string{
		h, h[:len(h)-1] + `0"`, h[:len(h)-2] + `"`, h[:len(h)-1], h + `x`, h + `"`,
		h[:10] + "\x01" + h[11:], h[:10] + `\` + h[11:], h[:10] + `\n` + h[12:],
		`""`, `"\""`, `"\\"`, `"a"`, `"a"1`, `null`, `1`, `12`, `{}`, `[]`, `{"a":1}`,
	}
	for _, a := range vals {
		for _, b := range vals {
			for _, doc := range []string{"[" + a + "," + b + "]", "[" + a + "," + b + "," + b + "]", "[" + a + "," + a + "," + b + "]"} {
				s := newScanner([]byte(doc), 0)
				if s.arrBegin() {
					for s.arrNext() {
						s.skipSame()
					}
				}
				s.end()
				if got, want := s.err == nil, json.Valid([]byte(doc)); got != want {
					t.Errorf("%q: accepted %v, json.Valid %v", doc, got, want)
				}
			}
		}
	}
}
