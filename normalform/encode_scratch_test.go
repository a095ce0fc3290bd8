package normalform_test

import (
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
