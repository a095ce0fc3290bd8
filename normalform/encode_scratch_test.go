package normalform_test

import (
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
