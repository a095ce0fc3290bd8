package normalform

import (
	"testing"

	"github.com/holiman/uint256"
)

// TestTextBufDecAllocations: the canonical texts write an amount past
// 2^64 (most token amounts) into their buffer without making a string
// of it first (issue 22, session 7: Int.Dec's string was one allocation
// an amount of Hashes' exact text).
func TestTextBufDecAllocations(t *testing.T) {
	var v uint256.Int
	v.SetAllOne()
	b := textBuf{b: make([]byte, 0, 256)}
	if n := testing.AllocsPerRun(100, func() {
		b.b = b.b[:0]
		b.dec(&v)
	}); n != 0 {
		t.Fatalf("textBuf.dec of 2^256-1: %.1f allocations, want 0", n)
	}
}
