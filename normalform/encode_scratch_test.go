package normalform_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// TestEncoderChainLookup: the steps' encoding finds a step's chain by id
// among the chains EncodeNF's collect walked (linearly up to 32, through
// a map past that) instead of building chainsByID's map every time; both
// ways find what the map finds, on small and large normal forms.
func TestEncoderChainLookup(t *testing.T) {
	cfg := normalform.DefaultConfig()
	small, large := 0, 0
	for _, sh := range gen.Shapes {
		for _, n := range []int{6, 20, 200} {
			a, err := normalform.Analyze(sh.Build(n, 1), cfg)
			if err != nil {
				t.Fatalf("%s %d: %v", sh.Name, n, err)
			}
			chains, ok := normalform.ChainLookupAgrees(a)
			if !ok {
				t.Errorf("%s %d: the encoder's chain lookup differs from chainsByID (%d chains)", sh.Name, n, chains)
			}
			if chains > 32 {
				large++
			} else if chains > 0 {
				small++
			}
		}
	}
	if small == 0 || large == 0 {
		t.Fatalf("%d normal forms with 1 to 32 inner chains, %d with more: both ways must be tried", small, large)
	}
}

// TestHeadReadReused: one Head read from encodings in turn (large, small,
// a broken one, then others) holds what ReadHead returns for each: no
// table entry of an earlier read shows through the reused storage.
func TestHeadReadReused(t *testing.T) {
	cfg := normalform.DefaultConfig()
	var encs [][]byte
	for _, n := range []int{200, 6, 20} {
		for _, sh := range gen.Shapes {
			a, err := normalform.Analyze(sh.Build(n, 2), cfg)
			if err != nil {
				t.Fatalf("%s %d: %v", sh.Name, n, err)
			}
			encs = append(encs, normalform.EncodeNF(a))
		}
	}
	broken := append([]byte(nil), encs[0][:len(encs[0])/3]...)
	encs = append(encs[:3], append([][]byte{broken}, encs[3:]...)...)
	var h normalform.Head
	failed := 0
	for i, b := range encs {
		want, werr := normalform.ReadHead(b)
		err := h.Read(b)
		if (err == nil) != (werr == nil) {
			t.Fatalf("encoding %d: Read error %v, ReadHead error %v", i, err, werr)
		}
		if err != nil {
			failed++
			if len(h.Addrs) != 0 || len(h.Toks) != 0 || len(h.TokSpans) != 0 {
				t.Fatalf("encoding %d: a failed Read leaves %d addresses, %d tokens", i, len(h.Addrs), len(h.Toks))
			}
			continue
		}
		if !reflect.DeepEqual(&h, want) {
			t.Fatalf("encoding %d: the reused head differs from ReadHead's:\n%+v\n%+v", i, h, *want)
		}
	}
	if failed != 1 {
		t.Fatalf("%d reads failed, want 1 (the broken encoding)", failed)
	}
}

// TestEncodeWrappedRemembered: EncodeNF remembers the last
// configuration's wrapped-native set; encodings of analyses under
// configurations taken in turn (the default, another set, the default
// built again) are each what the first encoding under it was, the
// other set is written out, and each decodes to the same encoding.
func TestEncodeWrappedRemembered(t *testing.T) {
	tx := gen.ChainTx(20, 3)
	cfgs := []*normalform.Config{
		normalform.DefaultConfig(),
		normalform.NewConfig(normalform.Networks[1], []normalform.Address{gen.Addr("W1")}, nil),
		normalform.DefaultConfig(),
	}
	first := make([][]byte, len(cfgs))
	for round := range 3 {
		for i, cfg := range cfgs {
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			b := normalform.EncodeNF(a)
			if round == 0 {
				first[i] = b
				continue
			}
			if !bytes.Equal(b, first[i]) {
				t.Fatalf("round %d, configuration %d: the encoding changed", round, i)
			}
			d, err := normalform.DecodeNF(b)
			if err != nil {
				t.Fatalf("configuration %d: %v", i, err)
			}
			if !bytes.Equal(normalform.EncodeNF(d), b) {
				t.Fatalf("configuration %d: decoding and encoding again changes the bytes", i)
			}
		}
	}
	w := gen.Addr("W1")
	if !bytes.Contains(first[1][:64], w[:]) || bytes.Contains(first[0][:64], w[:]) || !bytes.Equal(first[0], first[2]) {
		t.Fatal("the other wrapped-native set is not written in its encoding's head, or the default's encodings differ")
	}
}
