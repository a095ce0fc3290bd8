package normalform_test

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// roundTrip checks EncodeNF/DecodeNF on one analysis: re-encoding gives
// the same bytes, and the decoded analysis renders and hashes the same.
func roundTrip(t *testing.T, a *Analysis) []byte {
	t.Helper()
	enc := EncodeNF(a)
	b, err := DecodeNF(enc)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if re := EncodeNF(b); !bytes.Equal(re, enc) {
		t.Fatalf("re-encoding differs (%d vs %d bytes)", len(re), len(enc))
	}
	var ra, rb strings.Builder
	DefaultConfig().WriteAnalysis(&ra, a, true)
	DefaultConfig().WriteAnalysis(&rb, b, true)
	if ra.String() != rb.String() {
		t.Fatalf("decoded analysis renders differently:\n%s\n----\n%s", ra.String(), rb.String())
	}
	if a.Hashes() != b.Hashes() {
		t.Fatalf("decoded analysis hashes differently")
	}
	return enc
}

func TestEncodeNFRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	total, n := 0, 0
	for i := 0; i < 1000; i++ {
		total += len(roundTrip(t, analyze(t, gen.RandomTx(r, false))))
		tx, _ := gen.RandomRoute(r)
		total += len(roundTrip(t, analyze(t, tx)))
		n += 2
	}
	b := &gen.Builder{}
	roundTrip(t, analyze(t, b.Tx("EOA", "SC", 100000, gen.TxR(b, txRArms, "BEAN", "BEAN/WETH"))))
	t.Logf("mean encoding %d bytes over %d generated transactions", total/n, n)
}

// Every truncation of a valid encoding, and every single-byte change, is
// an error or a valid analysis; never a panic.
func TestDecodeNFBadInput(t *testing.T) {
	b := &gen.Builder{}
	enc := EncodeNF(analyze(t, b.Tx("EOA", "SC", 100000, gen.TxR(b, txRArms, "BEAN", "BEAN/WETH"))))
	for i := 0; i < len(enc); i++ {
		if _, err := DecodeNF(enc[:i]); err == nil {
			t.Fatalf("truncation at %d of %d decoded without error", i, len(enc))
		}
	}
	for i := 0; i < len(enc); i++ {
		bad := append([]byte{}, enc...)
		bad[i] ^= 0xff
		DecodeNF(bad) // must not panic
	}
	if _, err := DecodeNF([]byte{99}); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("unknown version: %v", err)
	}
}

func FuzzDecodeNF(f *testing.F) {
	r := rand.New(rand.NewSource(6))
	for i := 0; i < 20; i++ {
		tx, _ := gen.RandomRoute(r)
		a, err := Analyze(tx, DefaultConfig())
		if err == nil {
			f.Add(EncodeNF(a))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := DecodeNF(data)
		if err != nil {
			return
		}
		// Whatever decodes must render and re-encode without panicking.
		var b strings.Builder
		DefaultConfig().WriteAnalysis(&b, a, true)
		_ = EncodeNF(a)
		_ = a.Hashes()
	})
}
