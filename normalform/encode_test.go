package normalform_test

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
	"github.com/flowq/flowq/normalform/show"
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
	show.WriteAnalysis(DefaultConfig(), &ra, a, true)
	show.WriteAnalysis(DefaultConfig(), &rb, b, true)
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
		show.WriteAnalysis(DefaultConfig(), &b, a, true)
		_ = EncodeNF(a)
		_ = a.Hashes()
	})
}

// TestStepLogCompact: the kernel's step texts are encoded as numbers and
// references (no note text, no names in the bytes), and any other text
// still round-trips, as a literal.
func TestStepLogCompact(t *testing.T) {
	b := &gen.Builder{}
	a := analyze(t, b.Tx("EOA", "SC", 100000, gen.TxR(b, txRArms, "BEAN", "BEAN/WETH")))
	notes := 0
	for _, s := range a.Steps {
		if s.NoteText() != "" {
			notes++
		}
	}
	if notes < 5 {
		t.Fatalf("tx_R has %d noted steps; the test needs some", notes)
	}
	enc := roundTrip(t, a)
	for _, text := range []string{"→", "chaining", "arbitrage", "frame", "C1"} {
		if bytes.Contains(enc, []byte(text)) {
			t.Errorf("the encoding holds %q: a step text was written out", text)
		}
	}
	// Texts the kernel does not write: literals, and the same rendering.
	odd := *a
	odd.Steps = append([]Step(nil), a.Steps...)
	odd.Steps[0].Operands = []string{"#03", "C", "frame x", "C1  C2", "", "#4 C5 frame 6"}
	odd.Steps[0].Result = "C2 #1"
	odd.Steps[1].Note = "free text → with arrows"
	odd.Steps[2].Result = "C999999"
	odd.Steps[2].Note = "chaining " + odd.Steps[2].NoteText()
	last := len(odd.Steps) - 1
	odd.Steps[last].Note = odd.Steps[last].NoteText() + " and more"
	roundTrip(t, &odd)
	if n := len(EncodeNF(&odd)); n <= len(enc) {
		t.Errorf("literal texts cost nothing (%d bytes, %d predicted)", n, len(enc))
	}
}

// TestNFHeads: NFTables and NFHashAt read the head of an encoding as
// DecodeNF does; a non-default wrapped-native configuration survives.
func TestNFHeads(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for i := 0; i < 200; i++ {
		tx, _ := gen.RandomRoute(r)
		tx.Meta.HasHash = true
		r.Read(tx.Meta.Hash[:])
		a := analyze(t, tx)
		enc := EncodeNF(a)
		at, err := NFHashAt(enc)
		if err != nil || !bytes.Equal(enc[at:at+32], tx.Meta.Hash[:]) {
			t.Fatalf("NFHashAt = %d, %v: not the hash", at, err)
		}
		addrs, toks, err := NFTables(enc)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[Address]bool{}
		for _, ad := range addrs {
			seen[ad] = true
		}
		ts := map[Token]bool{}
		for _, x := range toks {
			ts[x] = true
		}
		for _, x := range tx.Transfers {
			if !seen[x.From] || !seen[x.To] || !ts[x.Token] {
				t.Fatalf("the tables miss transfer %+v", x)
			}
		}
	}
	var w Address
	w[19] = 7
	cfg := NewConfig(Networks[1], []Address{w}, nil)
	b := &gen.Builder{}
	a, err := Analyze(b.Tx("EOA", "SC", 100000, gen.TxR(b, txRArms, "BEAN", "BEAN/WETH")), cfg)
	if err != nil {
		t.Fatal(err)
	}
	enc := roundTrip(t, a)
	if enc[2] != 2 || !bytes.Equal(enc[3:23], w[:]) {
		t.Errorf("the configured wrapped native is not written out: % x", enc[:23])
	}
	if def := EncodeNF(analyze(t, b.Tx("EOA", "SC", 100000, gen.TxR(b, txRArms, "BEAN", "BEAN/WETH")))); def[2] != 0 {
		t.Errorf("mainnet's default wrapped native written out (byte %d)", def[2])
	}
}

// TestNFVersion6Compact: encoding version 6 writes no reason's text, no
// detection's path word (a step's result), and each step of the kernel's
// in at most 8 bytes on tx_R; odd reasons and results still round-trip
// as literals, and a reason code past the table is an error.
func TestNFVersion6Compact(t *testing.T) {
	b := &gen.Builder{}
	a := analyze(t, b.Tx("EOA", "SC", 100000, gen.TxR(b, txRArms, "BEAN", "BEAN/WETH")))
	a.Reasons = append(a.Reasons, ReasonNoCycles, ReasonPayout)
	enc := roundTrip(t, a)
	for _, r := range a.Reasons {
		if bytes.Contains(enc, []byte(r)) {
			t.Errorf("the encoding holds the reason %q as text", r)
		}
	}
	detects := 0
	for _, s := range a.Steps {
		if s.Rule == Detect {
			detects++
			if bytes.Contains(enc, []byte(s.Result)) {
				t.Errorf("the encoding holds the detection step's result %q as text", s.Result)
			}
		}
	}
	if detects == 0 {
		t.Fatal("tx_R has no detection step; the test needs one")
	}
	noSteps := *a
	noSteps.Steps = nil
	if per := float64(len(enc)-len(EncodeNF(&noSteps))) / float64(len(a.Steps)); per > 8 {
		t.Errorf("%.1f bytes a step (%d steps)", per, len(a.Steps))
	}
	odd := *a
	odd.Reasons = []Reason{"a reason of no code", ReasonLeftovers}
	odd.Steps = append([]Step(nil), a.Steps...)
	odd.Steps[0].Result = "fixpoint2"
	roundTrip(t, &odd)
	// costs whose total is not the sum of the others, and gas used not
	// the receipt's: written out
	implied := len(EncodeNF(&odd))
	odd.Costs.Total.AddUint64(&odd.Costs.Total, 7)
	odd.Costs.GasUsed++
	if n := len(roundTrip(t, &odd)); n < implied+3 {
		t.Errorf("costs not implied cost nothing (%d bytes, %d implied)", n, implied)
	}
	// a reason code past the table: where two encodings differing in
	// their one reason differ
	c := *a
	c.Reasons = []Reason{ReasonV4Netted}
	ce := EncodeNF(&c)
	c.Reasons = []Reason{ReasonLeftovers}
	ce2 := EncodeNF(&c)
	i := 0
	for i < len(ce) && i < len(ce2) && ce[i] == ce2[i] {
		i++
	}
	if len(ce) != len(ce2) || i == len(ce) || ce[i] != 16 {
		t.Fatalf("the reason is not one byte (%d and %d bytes, differ at %d)", len(ce), len(ce2), i)
	}
	bad := append([]byte(nil), ce...)
	bad[i] = 200
	if _, err := DecodeNF(bad); err == nil {
		t.Error("a reason code past the table decoded")
	}
}
